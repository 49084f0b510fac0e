-- Which database this is, whatever host name, port or proxy reaches it. A
-- command that spools a batch after it had seen the database records this id
-- with the batch, and a replay refuses to store the batch into a database
-- with another id (a rebuilt server, another cluster's database behind the
-- same name). One row, made once by this migration.
CREATE TABLE fabtrack_instance (
  id uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  created_at timestamptz NOT NULL DEFAULT now(),
  only_row boolean NOT NULL DEFAULT true UNIQUE CHECK (only_row)
);
INSERT INTO fabtrack_instance DEFAULT VALUES;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT ON fabtrack_instance TO fabtrack_writer;
  END IF;
END $$;
