-- Real training jobs' collectives from NCCL's Inspector profiler plugin
-- (`fabtrack inspector ingest`): per job, per communicator, collective and
-- message size, the duration and bus-bandwidth distribution and the slowest
-- rank and host. Summaries, not the raw records (a job writes millions). The
-- analyzer compares them with the nightly benchmarks of the same node count.
CREATE TABLE inspector_jobs (
  id          bigserial PRIMARY KEY,
  cluster     text NOT NULL REFERENCES clusters (name),
  job_id      text NOT NULL,             -- Slurm job id, else the dump directory's name
  started_at  timestamptz,               -- first record's timestamp
  ended_at    timestamptz,               -- last record's
  nnodes      integer,
  nranks      integer,
  hosts       text[] NOT NULL DEFAULT '{}',
  records     bigint NOT NULL,
  source_path text,
  ingested_at timestamptz NOT NULL DEFAULT now(),
  UNIQUE (cluster, job_id)
);

CREATE TABLE inspector_collectives (
  job_id             bigint NOT NULL REFERENCES inspector_jobs (id) ON DELETE CASCADE,
  communicator       text NOT NULL,      -- comm hash as written ("0x..."), else its name
  collective         text NOT NULL,      -- fabtrack's spelling: all_reduce, all_gather, ...
  message_bytes      bigint NOT NULL,    -- per rank, as the plugin reports it
  nranks             integer,
  count              bigint NOT NULL,
  median_us          double precision NOT NULL,
  p90_us             double precision NOT NULL,
  max_us             double precision NOT NULL,
  median_busbw_gbps  double precision,
  slowest_rank       integer,
  slowest_rank_host  text,
  slowest_rank_ratio double precision,  -- its mean time / the median rank's
  slowest_host       text,
  slowest_host_ratio double precision,
  PRIMARY KEY (job_id, communicator, collective, message_bytes)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON inspector_jobs, inspector_collectives TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE inspector_jobs_id_seq TO fabtrack_writer;
  END IF;
END $$;
