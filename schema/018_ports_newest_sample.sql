-- Each port's newest counter sample, kept on its inventory row (issue 18
-- item 4). The analyzer reads every port of the cluster with its newest
-- sample each night; finding it per port in the month-partitioned samples
-- (a LATERAL probe into every partition) cost 64-145 ms for 32,768 ports.
-- The writer sets these in the same statement that inserts a sample, only
-- when the sample is the port's newest (an imported old dump does not move
-- them back); a prune that deletes a port's samples older than its cutoff
-- clears them where the newest one went (store/retention.cc).
ALTER TABLE ports
  ADD COLUMN newest_sample_at         timestamptz,
  ADD COLUMN newest_sample_run_id     bigint,
  ADD COLUMN newest_sample_state      text,
  ADD COLUMN newest_sample_phys_state text,
  ADD COLUMN newest_sample_rate_gbps  double precision;

UPDATE ports p
SET (newest_sample_at, newest_sample_run_id, newest_sample_state, newest_sample_phys_state,
     newest_sample_rate_gbps) =
    (SELECT s.sampled_at, s.run_id, s.state, s.phys_state, s.rate_gbps
     FROM port_counter_samples s WHERE s.port_id = p.id ORDER BY s.sampled_at DESC LIMIT 1);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT UPDATE (newest_sample_at, newest_sample_run_id, newest_sample_state,
                  newest_sample_phys_state, newest_sample_rate_gbps) ON ports TO fabtrack_writer;
  END IF;
END $$;
