-- fabtrack schema, version 1.
-- Frozen once landed: never edit an applied migration (fabtrack refuses a database whose
-- recorded checksum differs); change the schema with schema/002_*.sql and onwards.
-- Conventions: absent values are NULL, never 0. Times are timestamptz (UTC in
-- the database). Bandwidths are GB/s as nccl-tests prints them (1e9 bytes/s),
-- times are microseconds. Every table a collector writes has a natural key so
-- that re-ingesting or replaying is idempotent.

-- Clusters that fabtrack watches. `fabric` lets the analyzer know that an
-- Ethernet-only cluster is not "falling back" to sockets.
CREATE TABLE clusters (
  name            text PRIMARY KEY CHECK (name <> ''),
  fabric          text CHECK (fabric IN ('infiniband', 'roce', 'ethernet', 'mixed')),
  rail_optimized  boolean,
  description     text,
  created_at      timestamptz NOT NULL DEFAULT now()
);

-- One benchmark run: one nccl-tests table, one fabtrack-allreduce invocation,
-- or (later) one real job's communicator seen through NCCL Inspector.
CREATE TABLE runs (
  id                bigserial PRIMARY KEY,
  cluster           text NOT NULL REFERENCES clusters (name),
  started_at        timestamptz NOT NULL,
  ended_at          timestamptz,
  source            text NOT NULL CHECK (source <> ''),  -- 'nccl-tests', 'fabtrack-allreduce', ...
  backend           text,                                -- 'nccl' | 'mpi' for the harness
  collective        text,                                -- 'all_reduce', ...
  dtype             text,
  redop             text,
  ranks             integer CHECK (ranks > 0),
  nodes             integer CHECK (nodes > 0),
  gpus_per_node     integer CHECK (gpus_per_node > 0),
  ranks_per_node    integer CHECK (ranks_per_node > 0),
  hosts             text[] NOT NULL DEFAULT '{}',
  gpu_model         text,
  nccl_version      text,
  cuda_version      text,
  driver_version    text,
  mpi_version       text,
  nccl_tests_version text,
  network           text,                 -- what NCCL selected: 'IB', 'Socket', 'IBext_v8', ...
  transports        text[] NOT NULL DEFAULT '{}',  -- distinct channel families: 'NET/IB', 'P2P/IPC'
  gdrdma            boolean,              -- NULL: no evidence either way
  command_line      text,
  nccl_env          jsonb NOT NULL DEFAULT '{}',   -- NCCL_* (and launcher) variables
  slurm_job_id      text,
  slurm_step_id     text,
  tags              jsonb NOT NULL DEFAULT '{}',
  sweep_id          text,                 -- runs of one `fabtrack sweep` (one night's scaling curve)
  parameters        jsonb NOT NULL DEFAULT '{}',   -- sweep parameters: -b -e -f -n -w -c ...
  warmup_iters      integer,
  iters             integer,
  avg_busbw_gbps    double precision,     -- as printed in the trailer
  oob_ok            boolean,
  oob_count         bigint,
  link_straggler_host text,               -- node with the slow link per the harness link probe
  source_file       text,
  content_hash      text NOT NULL CHECK (content_hash ~ '^[0-9a-f]{64}$'),
  table_index       integer NOT NULL DEFAULT 0,  -- nth table of the source content
  status            text NOT NULL CHECK (status IN ('complete', 'partial', 'failed')),
  ingested_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (cluster, content_hash, table_index)
);
CREATE INDEX runs_cluster_time ON runs (cluster, started_at DESC);
CREATE INDEX runs_series ON runs (cluster, collective, dtype, nodes, ranks_per_node, started_at DESC);
CREATE INDEX runs_tags ON runs USING gin (tags);
CREATE INDEX runs_sweep ON runs (sweep_id) WHERE sweep_id IS NOT NULL;

-- Which rank ran where (nccl-tests device lines, harness metadata).
CREATE TABLE run_ranks (
  run_id     bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  rank       integer NOT NULL CHECK (rank >= 0),
  host       text NOT NULL,
  local_rank integer,
  pid        bigint,
  device     integer,
  bus_id     text,
  gpu_model  text,
  PRIMARY KEY (run_id, rank)
);
CREATE INDEX run_ranks_host ON run_ranks (host);

-- Per-size results, one row per printed line (sizes may repeat: keep row_index).
CREATE TABLE run_results (
  run_id          bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  row_index       integer NOT NULL,
  size_bytes      bigint NOT NULL CHECK (size_bytes >= 0),
  count           bigint,
  dtype           text,
  redop           text,
  root            integer,
  oop_time_us     double precision,
  oop_algbw_gbps  double precision,
  oop_busbw_gbps  double precision,
  oop_wrong       bigint,
  oop_max_error   double precision,
  ip_time_us      double precision,
  ip_algbw_gbps   double precision,
  ip_busbw_gbps   double precision,
  ip_wrong        bigint,
  ip_max_error    double precision,
  -- Latency distribution over timed iterations (harness; nccl-tests -R style
  -- per-iteration reports). Out-of-place unless noted.
  lat_mean_us     double precision,
  lat_p50_us      double precision,
  lat_p90_us      double precision,
  lat_p99_us      double precision,
  lat_min_us      double precision,
  lat_max_us      double precision,
  lat_stddev_us   double precision,
  lat_cv          double precision,     -- stddev / mean (a ratio, not percent)
  ip_lat_p50_us   double precision,
  ip_lat_p99_us   double precision,
  ip_lat_cv       double precision,
  straggler_host  text,
  straggler_rank  integer,
  straggler_excess_us double precision, -- slowest rank's mean minus the median rank's mean
  PRIMARY KEY (run_id, row_index)
);
CREATE INDEX run_results_size ON run_results (size_bytes, run_id);

-- Every timed iteration (harness). The biggest table after counters.
CREATE TABLE latency_samples (
  run_id      bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  row_index   integer NOT NULL,
  in_place    boolean NOT NULL,
  iteration   integer NOT NULL,
  latency_us  double precision NOT NULL,   -- max over ranks of this iteration
  PRIMARY KEY (run_id, row_index, in_place, iteration)
);

-- Per-rank timing summary per size (harness): who is the straggler.
CREATE TABLE rank_timings (
  run_id      bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  row_index   integer NOT NULL,
  in_place    boolean NOT NULL,
  rank        integer NOT NULL,
  host        text,
  mean_us     double precision,
  p50_us      double precision,
  p99_us      double precision,
  max_us      double precision,
  lateness_us double precision,          -- mean time the others waited for this rank
  PRIMARY KEY (run_id, row_index, in_place, rank)
);

-- The harness's point-to-point probe between nodes (one pair per row): a
-- collective cannot say which node's link is slow, pairs can.
CREATE TABLE link_probes (
  run_id     bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host_a     text NOT NULL,
  host_b     text NOT NULL,
  bytes      bigint NOT NULL,
  seconds    double precision NOT NULL,
  gbps       double precision NOT NULL,
  PRIMARY KEY (run_id, host_a, host_b)
);

-- NIC list each host's NCCL reported ("NET/IB : Using [0]mlx5_0:1/IB ...").
CREATE TABLE run_net_devices (
  run_id     bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host       text NOT NULL,
  nic_index  integer NOT NULL,
  device     text NOT NULL,
  port       integer,
  link       text CHECK (link IN ('IB', 'RoCE')),
  sharp      boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, host, nic_index, device)
);

-- One row per channel/ring connection line of the NCCL log.
CREATE TABLE transport_observations (
  run_id       bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  seq          integer NOT NULL,          -- order in the log
  host         text,
  rank         integer NOT NULL,
  peer_rank    integer NOT NULL,
  channel      integer NOT NULL,
  conn_index   integer,
  direction    text CHECK (direction IN ('send', 'receive')),
  family       text NOT NULL,             -- 'NET/IB', 'NET/Socket', 'P2P/IPC', 'SHM', ...
  detail       text NOT NULL,             -- as printed after "via"
  nic_index    integer,
  gdrdma       boolean NOT NULL,
  PRIMARY KEY (run_id, seq)
);
CREATE INDEX transport_observations_family ON transport_observations (family, run_id);

-- Which NIC each rank sent through (from NET channel lines): rails at a glance.
CREATE VIEW rank_nics AS
SELECT o.run_id, o.rank, o.host, o.nic_index, d.device,
       count(*) AS channels, bool_or(o.gdrdma) AS gdrdma
FROM transport_observations o
LEFT JOIN run_net_devices d
  ON d.run_id = o.run_id AND d.host = o.host AND d.nic_index = o.nic_index
WHERE o.family LIKE 'NET/%' AND o.nic_index IS NOT NULL
GROUP BY o.run_id, o.rank, o.host, o.nic_index, d.device;

-- Port inventory: every HCA port fabtrack has seen.
CREATE TABLE ports (
  id           serial PRIMARY KEY,
  cluster      text NOT NULL REFERENCES clusters (name),
  host         text NOT NULL,
  device       text NOT NULL,           -- mlx5_0
  port         integer NOT NULL,
  link_layer   text,                    -- 'InfiniBand' | 'Ethernet'
  netdev       text,
  node_guid    text,
  port_guid    text,
  fw_version   text,
  board_id     text,
  rate_gbps    double precision,        -- last seen
  first_seen   timestamptz NOT NULL DEFAULT now(),
  last_seen    timestamptz NOT NULL DEFAULT now(),
  UNIQUE (cluster, host, device, port)
);

-- Raw counter samples. Grows fastest: range-partitioned by month.
CREATE TABLE port_counter_samples (
  port_id      integer NOT NULL REFERENCES ports (id),
  sampled_at   timestamptz NOT NULL,
  run_id       bigint,                  -- set when the sample brackets a run
  phase        text CHECK (phase IN ('before', 'after', 'watch', 'snapshot')),
  state        text,
  phys_state   text,
  rate_gbps    double precision,
  xmit_bytes   bigint,
  rcv_bytes    bigint,
  xmit_packets bigint,
  rcv_packets  bigint,
  symbol_error bigint,
  link_error_recovery bigint,
  link_downed  bigint,
  port_rcv_errors bigint,
  port_rcv_remote_physical_errors bigint,
  port_rcv_switch_relay_errors bigint,
  port_xmit_discards bigint,
  port_xmit_constraint_errors bigint,
  port_rcv_constraint_errors bigint,
  local_link_integrity_errors bigint,
  excessive_buffer_overrun_errors bigint,
  vl15_dropped bigint,
  port_xmit_wait bigint,
  counters     jsonb NOT NULL DEFAULT '{}',   -- every counters/ file, raw
  hw_counters  jsonb NOT NULL DEFAULT '{}',   -- hw_counters/ (CNP/ECN, retransmits)
  ethtool      jsonb NOT NULL DEFAULT '{}',   -- RoCE PFC pause / per-priority stats
  saturated    text[] NOT NULL DEFAULT '{}',
  PRIMARY KEY (port_id, sampled_at)
) PARTITION BY RANGE (sampled_at);
CREATE TABLE port_counter_samples_default PARTITION OF port_counter_samples DEFAULT;
CREATE INDEX port_counter_samples_time ON port_counter_samples USING brin (sampled_at);
CREATE INDEX port_counter_samples_run ON port_counter_samples (run_id) WHERE run_id IS NOT NULL;

-- Creates the monthly partitions covering [from_month, to_month]. Collectors
-- call it for the current month before writing; rows outside any monthly
-- partition land in the default one rather than failing.
CREATE FUNCTION fabtrack_ensure_counter_partitions(from_month date, to_month date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', from_month);
  created integer := 0;
  part text;
BEGIN
  WHILE m <= to_month LOOP
    part := format('port_counter_samples_%s', to_char(m, 'YYYYMM'));
    IF to_regclass(part) IS NULL THEN
      EXECUTE format(
        'CREATE TABLE %I PARTITION OF port_counter_samples FOR VALUES FROM (%L) TO (%L)',
        part, m, (m + interval '1 month')::date);
      created := created + 1;
    END IF;
    m := (m + interval '1 month')::date;
  END LOOP;
  RETURN created;
END $$;
SELECT fabtrack_ensure_counter_partitions(date_trunc('month', now())::date,
                                          (date_trunc('month', now()) + interval '2 months')::date);

-- Per-port counter deltas over a run's window (after - before), corrected for
-- resets and wrap; `saturated` marks legacy counters stuck at their maximum.
CREATE TABLE run_port_deltas (
  run_id        bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  port_id       integer NOT NULL REFERENCES ports (id),
  counter       text NOT NULL,
  delta         bigint,                 -- NULL when the counter was absent
  per_second    double precision,
  window_start  timestamptz NOT NULL,
  window_end    timestamptz NOT NULL,
  saturated     boolean NOT NULL DEFAULT false,
  reset_seen    boolean NOT NULL DEFAULT false,
  PRIMARY KEY (run_id, port_id, counter)
);

-- What the analyzer concluded. One open finding per (cluster, kind, subject);
-- later nights update last_seen rather than adding rows.
CREATE TABLE findings (
  id           bigserial PRIMARY KEY,
  cluster      text NOT NULL REFERENCES clusters (name),
  kind         text NOT NULL,          -- 'socket_fallback', 'busbw_regression', ...
  severity     text NOT NULL CHECK (severity IN ('info', 'warning', 'critical')),
  subject      text NOT NULL,          -- what it is about: 'all_reduce/float/4 nodes/1 GiB', 'host1:mlx5_0/1'
  run_id       bigint REFERENCES runs (id) ON DELETE SET NULL,
  value        double precision,
  baseline     double precision,
  unit         text,
  message      text NOT NULL,
  evidence     jsonb NOT NULL DEFAULT '{}',
  first_seen   timestamptz NOT NULL,
  last_seen    timestamptz NOT NULL,
  state        text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'acknowledged', 'resolved')),
  resolved_at  timestamptz,
  CHECK (last_seen >= first_seen)
);
CREATE UNIQUE INDEX findings_one_open ON findings (cluster, kind, subject) WHERE state <> 'resolved';
CREATE INDEX findings_recent ON findings (cluster, state, last_seen DESC);
