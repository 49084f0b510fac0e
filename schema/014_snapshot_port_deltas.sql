-- Counter deltas between two consecutive stored snapshots of a port that no
-- run brackets (issue 22 item 2: `fabtrack import` of perfquery/ethtool/sysfs
-- dumps taken at two times, `counters snapshot --store`): the same table and
-- columns as a run's window, with run_id NULL and the window between the two
-- snapshots' times, computed by the same code (core/counter_deltas.h: resets
-- count from zero, saturated legacy counters have no delta). The analyzer
-- judges those whose window ends in its judged span like a run's window.
ALTER TABLE run_port_deltas DROP CONSTRAINT run_port_deltas_pkey;
ALTER TABLE run_port_deltas ALTER COLUMN run_id DROP NOT NULL;
-- A run's window stays unique per (run, port, counter) as the primary key
-- kept it (NULL run ids are distinct, so snapshot rows need their own key).
CREATE UNIQUE INDEX run_port_deltas_run_key ON run_port_deltas (run_id, port_id, counter);
-- One snapshot window per port ends at each snapshot: a snapshot imported
-- between two stored ones replaces the window that spanned it.
CREATE UNIQUE INDEX run_port_deltas_snapshot_key ON run_port_deltas (port_id, window_end, counter)
  WHERE run_id IS NULL;
-- What the analyzer reads of them: the windows ending in its judged span.
CREATE INDEX run_port_deltas_snapshot_end ON run_port_deltas (window_end) WHERE run_id IS NULL;

-- Storing a snapshot between two stored ones replaces the window that
-- spanned it, and importing one again its own windows (store/snapshot_deltas.cc).
-- Writers may not delete (004_roles): they clear exactly those rows through
-- this function, which runs with the owner's rights, touches only rows no
-- run owns and has a fixed search_path (as fabtrack_ensure_counter_partitions).
CREATE FUNCTION fabtrack_clear_snapshot_windows(p_port integer, p_ends timestamptz[])
RETURNS integer LANGUAGE sql SECURITY DEFINER SET search_path = public, pg_temp AS $$
  WITH gone AS (
    DELETE FROM run_port_deltas
    WHERE run_id IS NULL AND port_id = p_port AND window_end = ANY (p_ends)
    RETURNING 1)
  SELECT count(*)::integer FROM gone
$$;
REVOKE ALL ON FUNCTION fabtrack_clear_snapshot_windows(integer, timestamptz[]) FROM PUBLIC;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT EXECUTE ON FUNCTION fabtrack_clear_snapshot_windows(integer, timestamptz[])
      TO fabtrack_writer;
  END IF;
END $$;
