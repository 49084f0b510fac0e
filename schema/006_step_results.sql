-- Step mode of fabtrack-allreduce: a simulated data-parallel training step
-- (gradients reduced in buckets while the backward pass runs). One summary
-- row per run and one row per measured step, the slowest rank's figures.
-- Readers get SELECT through 004's default privileges; writers insert.
CREATE TABLE step_results (
  run_id          bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  model_params    bigint NOT NULL CHECK (model_params > 0),
  grad_dtype      text NOT NULL,
  grad_bytes      bigint NOT NULL CHECK (grad_bytes > 0),
  bucket_bytes    bigint NOT NULL CHECK (bucket_bytes > 0),
  buckets         integer NOT NULL CHECK (buckets > 0),
  forward_ms      double precision NOT NULL,
  backward_ms     double precision NOT NULL,
  steps           integer NOT NULL,
  step_ms_p50     double precision NOT NULL,
  step_ms_p90     double precision NOT NULL,
  step_ms_p99     double precision NOT NULL,
  step_ms_max     double precision NOT NULL,
  step_ms_mean    double precision NOT NULL,
  compute_ms_p50  double precision NOT NULL,
  exposed_ms_p50  double precision NOT NULL,   -- communication not hidden by compute
  exposed_ms_p99  double precision NOT NULL,
  exposed_ms_mean double precision NOT NULL,
  idle_share_p50  double precision NOT NULL,   -- exposed / step: the GPUs' idle share
  idle_share_mean double precision NOT NULL
);

CREATE TABLE step_samples (
  run_id     bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  step       integer NOT NULL,
  step_ms    double precision NOT NULL,
  compute_ms double precision NOT NULL,
  exposed_ms double precision NOT NULL,
  PRIMARY KEY (run_id, step)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON step_results, step_samples TO fabtrack_writer;
  END IF;
END $$;
