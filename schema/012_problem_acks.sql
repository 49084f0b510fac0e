-- `fabtrack ack PROBLEM --until DATE --note TEXT` (issue 22): a known problem
-- silenced until a date. PROBLEM is the problem's id, the fingerprint of its
-- findings (findings.fingerprint); an ack outlives the findings it silences
-- (a problem that recovers and comes back before the date stays silenced).
-- Kept, never updated: the newest unexpired one is in force, the others are
-- the history of who knew what when.
CREATE TABLE problem_acks (
  id          bigserial PRIMARY KEY,
  cluster     text NOT NULL REFERENCES clusters (name) ON DELETE CASCADE,
  problem     text NOT NULL,
  until       timestamptz NOT NULL,
  note        text NOT NULL,
  acked_by    text NOT NULL DEFAULT current_user,
  acked_at    timestamptz NOT NULL DEFAULT now(),
  CHECK (until > acked_at)
);
CREATE INDEX problem_acks_in_force ON problem_acks (cluster, problem, until DESC);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON problem_acks TO fabtrack_reader;
  END IF;
END
$$;
