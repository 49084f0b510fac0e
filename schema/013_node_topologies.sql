-- Each node's GPU/NIC wiring as `fabtrack topology ingest` read it (issue 21
-- item 3): the model of core/node_topology.h as JSON (core's one serializer),
-- and its fingerprint so that a node re-ingested unchanged adds no row. The
-- fleet diff reads the newest row of every host of a cluster.
CREATE TABLE node_topologies (
  id           bigserial PRIMARY KEY,
  cluster      text NOT NULL REFERENCES clusters (name),
  host         text NOT NULL,
  recorded_at  timestamptz NOT NULL DEFAULT now(),
  format       text NOT NULL,                -- nccl_xml | nvidia_smi_topo
  fingerprint  text NOT NULL,                -- sha256 of the rails (TopologyFingerprint)
  topology     jsonb NOT NULL,               -- {"gpus": [...], "nics": [...]}
  source_path  text
);
CREATE INDEX node_topologies_host ON node_topologies (cluster, host, recorded_at DESC);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON node_topologies TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE node_topologies_id_seq TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON node_topologies TO fabtrack_reader;
  END IF;
END $$;
