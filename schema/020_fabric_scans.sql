-- Each subnet scan `fabtrack fabric scan --cluster C` stored (issue 31): the
-- whole scan as core/fabric_scan_json.h writes it (nodes, cables with both
-- ends and their counters, what did not answer) and the findings of its
-- window. The ports table cannot hold it: it has ports, not cables, and the
-- next scan is judged against this one's cables (a cable present here and
-- missing there is down). The switch ports' counters also go to ports and
-- port_counter_samples (host = the switch's node GUID, device 'switch'),
-- like HCA ports, so deltas, retention and Grafana work on them.
CREATE TABLE fabric_scans (
  id           bigserial PRIMARY KEY,
  cluster      text NOT NULL REFERENCES clusters (name),
  scanned_at   timestamptz NOT NULL,
  source       text,                          -- the local CA/port: "mlx5_0/1"
  nodes        integer NOT NULL,
  links        integer NOT NULL,
  unanswered   integer NOT NULL,
  scan         jsonb NOT NULL,
  findings     jsonb NOT NULL DEFAULT '[]'
);
CREATE INDEX fabric_scans_cluster ON fabric_scans (cluster, scanned_at DESC);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON fabric_scans TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE fabric_scans_id_seq TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON fabric_scans TO fabtrack_reader;
  END IF;
END $$;
