-- Counter partitions created on demand by the collectors that write samples,
-- safe when many collectors do it at once (advisory lock), and never failing
-- a write: a month whose rows already sit in the default partition keeps
-- using it (PostgreSQL cannot attach a partition over rows the default holds).
CREATE OR REPLACE FUNCTION fabtrack_ensure_counter_partitions(from_month date, to_month date)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
  m date := date_trunc('month', from_month);
  created integer := 0;
  part text;
BEGIN
  PERFORM pg_advisory_xact_lock(hashtext('fabtrack_counter_partitions'));
  WHILE m <= to_month LOOP
    part := format('port_counter_samples_%s', to_char(m, 'YYYYMM'));
    IF to_regclass(part) IS NULL AND NOT EXISTS (
         SELECT 1 FROM port_counter_samples_default
         WHERE sampled_at >= m AND sampled_at < (m + interval '1 month')) THEN
      EXECUTE format(
        'CREATE TABLE %I PARTITION OF port_counter_samples FOR VALUES FROM (%L) TO (%L)',
        part, m, (m + interval '1 month')::date);
      created := created + 1;
    END IF;
    m := (m + interval '1 month')::date;
  END LOOP;
  RETURN created;
END $$;
