-- `fabtrack ras watch --job ID` (issue 34 item 2): a running job's NCCL RAS
-- reports taken every few seconds, kept with the job, and the watch's verdict
-- over them.
-- ras_snapshots: one row per report, per communicator (jsonb, as
-- core/ras_snapshot.h writes it) its state, errors and each rank's state,
-- collective counts per operation, node IP, the host fabtrack mapped it to,
-- GPU and pid. Gone with the cluster.
CREATE TABLE ras_snapshots (
  id             bigserial PRIMARY KEY,
  cluster        text NOT NULL REFERENCES clusters (name) ON DELETE CASCADE,
  job_id         text NOT NULL,
  taken_at       timestamptz NOT NULL,
  report_format  text NOT NULL CHECK (report_format IN ('json', 'text')),
  nccl_version   text NOT NULL DEFAULT '',
  health         text NOT NULL CHECK (health IN ('healthy', 'warning', 'critical')),
  communicators  jsonb NOT NULL,
  UNIQUE (cluster, job_id, taken_at)
);

-- ras_job_verdicts: the newest verdict of each watched job (stuck
-- communicators, laggards, dead ranks, each with its hosts' port counter
-- changes over the window). first_stuck_at is the alert's dedup key: set the
-- first time a watch finds the job stuck and never again, so that a job is
-- alerted once however many watches see it stuck.
CREATE TABLE ras_job_verdicts (
  cluster         text NOT NULL REFERENCES clusters (name) ON DELETE CASCADE,
  job_id          text NOT NULL,
  first_taken_at  timestamptz NOT NULL,
  judged_at       timestamptz NOT NULL,   -- the newest snapshot judged
  snapshots       integer NOT NULL,
  health          text NOT NULL CHECK (health IN ('healthy', 'warning', 'critical')),
  stuck           boolean NOT NULL,
  first_stuck_at  timestamptz,
  verdict         jsonb NOT NULL,
  PRIMARY KEY (cluster, job_id)
);
CREATE INDEX ras_job_verdicts_recent ON ras_job_verdicts (cluster, judged_at DESC);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT, UPDATE ON ras_snapshots, ras_job_verdicts TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE ras_snapshots_id_seq TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON ras_snapshots, ras_job_verdicts TO fabtrack_reader;
  END IF;
END $$;
