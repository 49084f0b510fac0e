-- Least privilege. Three group roles (NOLOGIN); deployments grant them to
-- login roles (`CREATE ROLE node_collector LOGIN IN ROLE fabtrack_writer`):
--   fabtrack_writer   collectors, the harness, ingest, sweeps: insert what
--                     they measure, refresh the few columns that finish a run
--                     or a port's inventory row; never delete, never DDL.
--   fabtrack_reader   Grafana and reports: select only.
--   fabtrack_analyzer reads everything, writes findings and the analyses log.
-- Migrations run as the schema owner (the role that runs `fabtrack db
-- migrate`), which owns every table. Roles are cluster-wide in PostgreSQL: a
-- role that already exists is reused; an owner without CREATEROLE gets a
-- notice and must have an administrator create the three roles.
DO $$
DECLARE
  r text;
BEGIN
  FOREACH r IN ARRAY ARRAY['fabtrack_writer', 'fabtrack_reader', 'fabtrack_analyzer'] LOOP
    IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
      BEGIN
        EXECUTE format('CREATE ROLE %I NOLOGIN', r);
      EXCEPTION WHEN insufficient_privilege THEN
        RAISE NOTICE 'cannot create role %: ask an administrator to CREATE ROLE % NOLOGIN and rerun', r, r;
      END;
    END IF;
  END LOOP;
END $$;

-- Collectors create the month's counter partition through this function,
-- which runs with the owner's rights (partitions are DDL) and a fixed
-- search_path so that a caller cannot substitute objects.
ALTER FUNCTION fabtrack_ensure_counter_partitions(date, date) SECURITY DEFINER;
ALTER FUNCTION fabtrack_ensure_counter_partitions(date, date) SET search_path = public, pg_temp;
REVOKE ALL ON FUNCTION fabtrack_ensure_counter_partitions(date, date) FROM PUBLIC;

DO $$
DECLARE
  t text;
  db text := current_database();
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO fabtrack_reader', db);
    GRANT USAGE ON SCHEMA public TO fabtrack_reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO fabtrack_reader;
  END IF;

  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO fabtrack_writer', db);
    GRANT USAGE ON SCHEMA public TO fabtrack_writer;
    -- What a writer reads: the schema version, its own inserts (RETURNING,
    -- ON CONFLICT, dedup of re-ingested content) and the inventory it upserts.
    GRANT SELECT ON fabtrack_schema_migrations, clusters, runs, run_ranks, run_results,
      latency_samples, rank_timings, link_probes, run_net_devices, transport_observations,
      ports, port_counter_samples, run_port_deltas TO fabtrack_writer;
    FOREACH t IN ARRAY ARRAY['clusters', 'runs', 'run_ranks', 'run_results', 'latency_samples',
        'rank_timings', 'link_probes', 'run_net_devices', 'transport_observations', 'ports',
        'port_counter_samples', 'run_port_deltas'] LOOP
      EXECUTE format('GRANT INSERT ON %I TO fabtrack_writer', t);
    END LOOP;
    -- A run is finished after its sizes are stored (status, trailer,
    -- transport known at the end); a port's inventory row is refreshed.
    GRANT UPDATE (status, ended_at, avg_busbw_gbps, oob_ok, oob_count, network, transports,
      gdrdma, nccl_version, link_straggler_host) ON runs TO fabtrack_writer;
    GRANT UPDATE (link_layer, netdev, node_guid, fw_version, board_id, rate_gbps, last_seen)
      ON ports TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE runs_id_seq, ports_id_seq TO fabtrack_writer;
    GRANT EXECUTE ON FUNCTION fabtrack_ensure_counter_partitions(date, date) TO fabtrack_writer;
  END IF;

  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_analyzer') THEN
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO fabtrack_analyzer', db);
    GRANT USAGE ON SCHEMA public TO fabtrack_analyzer;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO fabtrack_analyzer;
    GRANT INSERT, UPDATE ON findings, analyses TO fabtrack_analyzer;
    GRANT USAGE ON SEQUENCE findings_id_seq, analyses_id_seq TO fabtrack_analyzer;
  END IF;

  -- Tables added by later migrations stay readable by the readers.
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') AND
     EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_analyzer') THEN
    ALTER DEFAULT PRIVILEGES IN SCHEMA public
      GRANT SELECT ON TABLES TO fabtrack_reader, fabtrack_analyzer;
  END IF;
END $$;
