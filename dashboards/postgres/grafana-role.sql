-- The login role Grafana connects as: fabtrack_grafana, a member of the
-- fabtrack_reader group that migration 004 creates (SELECT on every fabtrack
-- table, nothing else), in read-only transactions with bounded statements.
-- Idempotent; run by the schema owner or an administrator after
-- `fabtrack db migrate`, with the password in the environment, the same
-- variable Grafana's data source provisioning reads:
--   FABTRACK_GRAFANA_DB_PASSWORD=... psql "$FABTRACK_DB" -f dashboards/postgres/grafana-role.sql
\set ON_ERROR_STOP on
\getenv grafana_password FABTRACK_GRAFANA_DB_PASSWORD
\if :{?grafana_password}
\else
DO $$ BEGIN RAISE EXCEPTION 'grafana-role.sql: set FABTRACK_GRAFANA_DB_PASSWORD'; END $$;
\endif
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    RAISE EXCEPTION 'role fabtrack_reader is missing: run `fabtrack db migrate` (migration 004) first';
  END IF;
END $$;

SELECT 'CREATE ROLE fabtrack_grafana LOGIN'
  WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_grafana') \gexec
ALTER ROLE fabtrack_grafana WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION INHERIT
  CONNECTION LIMIT 20 PASSWORD :'grafana_password';
SET client_min_messages = warning;
GRANT fabtrack_reader TO fabtrack_grafana;
-- Grafana runs whatever SQL a dashboard editor types: keep it read-only and short.
ALTER ROLE fabtrack_grafana SET default_transaction_read_only = on;
ALTER ROLE fabtrack_grafana SET statement_timeout = '30s';
ALTER ROLE fabtrack_grafana SET idle_in_transaction_session_timeout = '60s';
