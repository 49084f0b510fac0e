-- Each node's CPUs over a sweep run's window (issue 32 item 3): over sockets
-- or MPI over TCP the CPU is in the data path, so a node busy with other work
-- reads as a slow fabric. The sweep samples /proc/stat, /proc/loadavg and the
-- node's other processes just before and just after the run (`fabtrack
-- counters cpu` on every node); one row per run and node, as
-- core/node_cpu.h's NodeCpuWindow: the window's length, the node's CPUs, the
-- shares of CPU time busy and stolen, the CPUs' worth of time other
-- processes used, the 1-minute load before and after, and the heaviest other
-- processes. Gone with its run. `analyze` names the busy nodes of a
-- CPU-driven run (cpu_bound) and folds that run's regressions into it.
CREATE TABLE run_cpu_windows (
  run_id          bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  host            text NOT NULL,
  seconds         double precision NOT NULL,
  cpus            integer NOT NULL,
  busy_fraction   double precision NOT NULL,
  steal_fraction  double precision NOT NULL,
  other_cpus      double precision NOT NULL,
  load1_before    double precision NOT NULL,
  load1_after     double precision NOT NULL,
  top_others      jsonb NOT NULL DEFAULT '[]',
  PRIMARY KEY (run_id, host)
);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT, UPDATE ON run_cpu_windows TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON run_cpu_windows TO fabtrack_reader;
  END IF;
END $$;
