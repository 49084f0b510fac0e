-- The switch side of a sweep run's window (`fabtrack sweep --fabric-scan`,
-- issue 31 item 3): the subnet scanned just before and just after the run,
-- cut down to the cables of the leaves the run's nodes hang on (their HCA
-- cables and the leaves' uplinks, both ends), as core/run_fabric_window.h
-- writes it, and which of the run's hosts no HCA's node description named.
-- One row per run, gone with its run. `analyze` judges the two scans like two
-- stored scans and names an uplink that errored during the run beside the
-- run's own findings.
CREATE TABLE run_fabric_windows (
  run_id          bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  scanned_before  timestamptz NOT NULL,
  scanned_after   timestamptz NOT NULL,
  links           integer NOT NULL,             -- cables in the window (after)
  unmapped_hosts  text[] NOT NULL DEFAULT '{}',
  fabric_window   jsonb NOT NULL
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT, UPDATE ON run_fabric_windows TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON run_fabric_windows TO fabtrack_reader;
  END IF;
END $$;
