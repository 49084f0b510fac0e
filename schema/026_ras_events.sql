-- `fabtrack ras watch` reads NCCL's RAS event stream beside its snapshots
-- (NCCL >= 2.29, the MONITOR command): each event is stored with the job as
-- it comes, and the watch's verdict uses them (a PEER_DEAD names the dead
-- process at once, where the status report says so only after RAS's 60 s).
-- ras_events: one row per event. event_time is the time as RAS printed it,
-- the RAS node's local clock with no zone ("2025-12-19 13:07:07");
-- received_at is fabtrack's own clock when it read the event, the time the
-- verdict uses. node is the peer's IP address, host what fabtrack mapped it
-- to. raw is the line or JSON object as received (an event fabtrack does not
-- know is kept whole). Gone with the cluster.
CREATE TABLE ras_events (
  id             bigserial PRIMARY KEY,
  cluster        text NOT NULL REFERENCES clusters (name) ON DELETE CASCADE,
  job_id         text NOT NULL,
  received_at    timestamptz NOT NULL,
  event_time     text NOT NULL DEFAULT '',
  event_group    text NOT NULL DEFAULT '',
  event          text NOT NULL,
  node           text NOT NULL DEFAULT '',
  host           text NOT NULL DEFAULT '',
  pid            bigint,
  gpus           text NOT NULL DEFAULT '',
  details        text NOT NULL DEFAULT '',
  stream_format  text NOT NULL CHECK (stream_format IN ('json', 'text')),
  raw            text NOT NULL DEFAULT ''
);
CREATE INDEX ras_events_job ON ras_events (cluster, job_id, received_at);

-- A process declared dead (PEER_DEAD) is alerted once per job, as a stuck
-- job is: set the first time a watch stores a verdict with one, never again.
ALTER TABLE ras_job_verdicts ADD COLUMN first_peer_dead_at timestamptz;

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_writer') THEN
    GRANT SELECT, INSERT ON ras_events TO fabtrack_writer;
    GRANT USAGE ON SEQUENCE ras_events_id_seq TO fabtrack_writer;
  END IF;
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'fabtrack_reader') THEN
    GRANT SELECT ON ras_events TO fabtrack_reader;
  END IF;
END $$;
