-- `fabtrack locate --cluster` (issue 20): each verdict, its ranked suspects,
-- and the runs it was run for (the night's flagged runs, a sweep's runs).
-- Written by the locate command as a measurement (fabtrack_writer); the
-- analyzer turns a recent verdict with suspects into a `locate_suspect`
-- finding, and the report and the Grafana panel list the newest verdicts.
-- content_hash (SHA-256 of the stored record's JSON) makes a replay of a
-- spooled verdict a no-op.
CREATE TABLE locate_verdicts (
  id              bigserial PRIMARY KEY,
  cluster         text NOT NULL REFERENCES clusters (name),
  located_at      timestamptz NOT NULL,
  hosts           text[] NOT NULL,
  nodes           integer NOT NULL CHECK (nodes >= 2),
  rounds          integer NOT NULL CHECK (rounds >= 0),
  seconds         double precision NOT NULL CHECK (seconds >= 0),
  probes          integer NOT NULL CHECK (probes >= 0),
  settled         boolean NOT NULL,
  busbw_spread    double precision,           -- healthy probes' scaled MAD / median
  latency_spread  double precision,
  exit_status     integer NOT NULL CHECK (exit_status IN (0, 1, 2)),
  budget_spent    boolean NOT NULL DEFAULT false,
  sweep_id        text,
  content_hash    text NOT NULL UNIQUE
);
CREATE INDEX locate_verdicts_recent ON locate_verdicts (cluster, located_at DESC);

CREATE TABLE locate_suspects (
  verdict_id  bigint NOT NULL REFERENCES locate_verdicts (id) ON DELETE CASCADE,
  rank        integer NOT NULL CHECK (rank > 0),   -- 1: most likely
  kind        text NOT NULL CHECK (kind IN ('node', 'link', 'uplink')),
  name        text NOT NULL,                       -- 'node7', 'leaf2-spine', 'node3->node9'
  score       double precision NOT NULL,
  evidence    text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (verdict_id, rank)
);

CREATE TABLE locate_verdict_runs (
  verdict_id  bigint NOT NULL REFERENCES locate_verdicts (id) ON DELETE CASCADE,
  run_id      bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  PRIMARY KEY (verdict_id, run_id)
);
CREATE INDEX locate_verdict_runs_run ON locate_verdict_runs (run_id);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON locate_verdicts, locate_suspects, locate_verdict_runs
      TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE locate_verdicts_id_seq TO fabtrack_writer;
    -- `locate --flagged-since` reads which runs the night's analysis flagged.
    GRANT SELECT ON findings TO fabtrack_writer;
  END IF;
END $$;
