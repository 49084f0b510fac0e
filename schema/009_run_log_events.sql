-- Lines of a run's log that say it failed or what NCCL could not use (issue
-- 16): NCCL WARN lines (IB completion errors among them), INFO lines about
-- the network ("NET/IB : No device found.", "GPU Direct RDMA Disabled for HCA
-- 0 'mlx5_0'", NET plugin load failures), nccl-tests' "Test NCCL failure"
-- lines. Kept as printed after the NCCL prefix: the analyzer reads their
-- meaning (analyzer/log_events.h), so a new reading needs no new column.
CREATE TABLE run_log_events (
  run_id  bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq     integer NOT NULL,                 -- order in the log
  level   text NOT NULL CHECK (level IN ('warn', 'info', 'test')),
  line    integer CHECK (line > 0),         -- 1-based line in the source file
  host    text,                             -- only from a real host:pid:tid prefix
  text    text NOT NULL,
  PRIMARY KEY (run_id, seq)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON run_log_events TO fabtrack_writer;
  END IF;
END $$;
