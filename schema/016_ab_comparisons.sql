-- `fabtrack sweep --ab SETTING=VALUE` (issue 21): one sweep run without (side
-- A) and with (side B) one setting, alternating order over rounds (A B B A).
-- Both sides are ordinary runs (tags ab_id, ab_side, ab_round, and on side B
-- ab_setting); this is the comparison: its verdict, each figure's judgement
-- (per series headline and per size) and the runs it was made from. Written
-- by the sweep as a measurement (fabtrack_writer), spooled when the database
-- is away; content_hash (SHA-256 of the record's JSON) makes a replay a no-op.
CREATE TABLE ab_comparisons (
  id            bigserial PRIMARY KEY,
  cluster       text NOT NULL REFERENCES clusters (name),
  ab_id         text NOT NULL,
  compared_at   timestamptz NOT NULL,
  setting       text NOT NULL,             -- as given: 'NCCL_ALGO=Ring', 'nccl-lib=/opt/nccl/lib'
  rounds        integer NOT NULL CHECK (rounds > 0),
  run_order     text NOT NULL,             -- 'ABBA'
  outcome       text NOT NULL
                CHECK (outcome IN ('no_difference', 'b_faster', 'b_slower', 'mixed', 'inconclusive')),
  content_hash  text NOT NULL UNIQUE
);
CREATE INDEX ab_comparisons_recent ON ab_comparisons (cluster, compared_at DESC);
CREATE INDEX ab_comparisons_ab_id ON ab_comparisons (ab_id);

-- One figure: a series' headline (size_bytes NULL) or one size. a and b hold
-- each side's value per round; ratio = median(b) / median(a); ratio_low/high
-- the range of the per-round ratios; noise the larger relative spread of one
-- side's repeats.
CREATE TABLE ab_judgements (
  comparison_id  bigint NOT NULL REFERENCES ab_comparisons (id) ON DELETE CASCADE,
  collective     text NOT NULL,
  nodes          integer NOT NULL,
  metric         text NOT NULL CHECK (metric IN ('busbw', 'time')),
  size_bytes     bigint,
  a              double precision[] NOT NULL,
  b              double precision[] NOT NULL,
  ratio          double precision NOT NULL,
  ratio_low      double precision NOT NULL,
  ratio_high     double precision NOT NULL,
  noise          double precision NOT NULL,
  outcome        text NOT NULL
                 CHECK (outcome IN ('no_difference', 'b_faster', 'b_slower', 'inconclusive'))
);
CREATE UNIQUE INDEX ab_judgements_figure
  ON ab_judgements (comparison_id, collective, nodes, metric, coalesce(size_bytes, -1));

-- The runs of both sides, linked by their ab_id tag when the comparison is
-- written (a spooled comparison is replayed after the spooled runs).
CREATE TABLE ab_comparison_runs (
  comparison_id  bigint NOT NULL REFERENCES ab_comparisons (id) ON DELETE CASCADE,
  run_id         bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  side           text NOT NULL CHECK (side IN ('A', 'B')),
  round          integer NOT NULL CHECK (round > 0),
  PRIMARY KEY (comparison_id, run_id)
);
CREATE INDEX ab_comparison_runs_run ON ab_comparison_runs (run_id);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON ab_comparisons, ab_judgements, ab_comparison_runs TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE ab_comparisons_id_seq TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON ab_comparisons, ab_judgements, ab_comparison_runs TO fabtrack_reader;
  END IF;
END $$;
