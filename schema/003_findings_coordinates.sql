-- Findings carry their coordinates as columns (dashboards and alert rules
-- filter on host, node count, size) and a stable fingerprint (the Prometheus
-- textfile and Alertmanager identify a finding by it across nights).
ALTER TABLE findings
  ADD COLUMN fingerprint    text,
  ADD COLUMN run_started_at timestamptz,
  ADD COLUMN nodes          integer,
  ADD COLUMN host           text,
  ADD COLUMN device         text,
  ADD COLUMN port           integer,
  ADD COLUMN size_bytes     bigint;
CREATE INDEX findings_fingerprint ON findings (fingerprint);
CREATE INDEX findings_run ON findings (run_id);

-- One row per `fabtrack analyze`: what was judged and what came out, so a
-- dashboard can tell "no findings" from "the analysis did not run".
CREATE TABLE analyses (
  id           bigserial PRIMARY KEY,
  cluster      text NOT NULL REFERENCES clusters (name),
  analyzed_at  timestamptz NOT NULL DEFAULT now(),
  judge_from   timestamptz NOT NULL,
  judged_runs  integer NOT NULL,
  findings     integer NOT NULL,
  critical     integer NOT NULL,
  warning      integer NOT NULL,
  info         integer NOT NULL,
  exit_status  integer NOT NULL,
  detectors    text[] NOT NULL DEFAULT '{}'
);
CREATE INDEX analyses_recent ON analyses (cluster, analyzed_at DESC);
