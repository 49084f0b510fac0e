-- Where a run's ranks ran physically. Hostnames cannot tell network
-- namespaces, containers or pods on one machine apart; the kernel's boot id
-- can (see collector/harness/machine_placement.h). A run with more ranks
-- than CPUs on one machine measures the scheduler at small sizes, not the
-- fabric: the analyzer leaves its latency unjudged and dashboards can mark it.
ALTER TABLE runs
  ADD COLUMN machines              integer CHECK (machines > 0),
  ADD COLUMN max_ranks_per_machine integer CHECK (max_ranks_per_machine > 0),
  ADD COLUMN cpus_per_machine      integer CHECK (cpus_per_machine > 0),
  ADD COLUMN oversubscribed        boolean
    GENERATED ALWAYS AS (max_ranks_per_machine > cpus_per_machine) STORED;
COMMENT ON COLUMN runs.oversubscribed IS
  'more ranks than CPUs on one physical machine; NULL when not recorded (nccl-tests files)';
