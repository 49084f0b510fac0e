-- The analyzer's summarised history (issue 18 item 4): per run, the figures
-- the detectors derived from it (a series' band value and robust verdict, a
-- run's jitter band medians, a sweep's efficiency, ...), as
-- {"<detector>/<settings hash>": [numbers, null for none]}, so that a nightly
-- analysis reads one row per history run instead of every size of every run
-- and does not judge three years again. The keys name the settings they were
-- computed under (a settings change reads none of them); the state row says
-- which runs they were computed over (a late older run, a deleted run or a
-- status change makes the digest differ and the next analysis reads the full
-- history and writes them again). Deleting a run deletes its row.
CREATE TABLE analysis_run_summaries (
  run_id   bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  summary  jsonb NOT NULL
);

CREATE TABLE analysis_summary_state (
  cluster             text PRIMARY KEY REFERENCES clusters (name) ON DELETE CASCADE,
  -- The summaries stand for the runs started at or before this time...
  through_started_at  timestamptz NOT NULL,
  -- ...whose ids and statuses hash to this (core RunsDigest).
  runs_digest         text NOT NULL,
  updated_at          timestamptz NOT NULL DEFAULT now()
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_analyzer') THEN
    GRANT SELECT, INSERT, UPDATE, DELETE ON analysis_run_summaries, analysis_summary_state
      TO fabtrack_analyzer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON analysis_run_summaries, analysis_summary_state TO fabtrack_reader;
  END IF;
END $$;
