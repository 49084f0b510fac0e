-- A digest of each run's host list, kept by a trigger (issue 18 item 4). The
-- analyzer needs every run's hosts (what changed at a change point), but a
-- cluster's sweeps repeat a few lists: three years of nightly sweeps up to
-- 4096 nodes are ~10^7 host names in ~10^4 TOASTed arrays, and reading them
-- all took seconds. With the digest the reader loads each distinct list once
-- and reads no array it has already seen. Set by the server so that every
-- writer (ingest, harness, spool replay, COPY) gets it without changes.
ALTER TABLE runs ADD COLUMN hosts_digest text;

CREATE FUNCTION runs_set_hosts_digest() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
  NEW.hosts_digest := md5(coalesce(NEW.hosts, '{}'::text[])::text);
  RETURN NEW;
END $$;

CREATE TRIGGER runs_hosts_digest BEFORE INSERT OR UPDATE OF hosts ON runs
  FOR EACH ROW EXECUTE FUNCTION runs_set_hosts_digest();

UPDATE runs SET hosts_digest = md5(coalesce(hosts, '{}'::text[])::text);
ALTER TABLE runs ALTER COLUMN hosts_digest SET NOT NULL;
CREATE INDEX runs_hosts_digest ON runs (cluster, hosts_digest);

-- The port counter deltas the analyzer reads for a judged run: saturated, or
-- moved and not a traffic counter (store/analysis_reader.cc kMovedPortDelta,
-- the same text). A 4096-node night is ~10^6 delta rows, ~3% of them these.
CREATE INDEX run_port_deltas_moved ON run_port_deltas (run_id)
  WHERE (saturated OR (delta IS DISTINCT FROM 0 AND counter <> ALL ('{port_xmit_data,port_rcv_data,port_xmit_packets,port_rcv_packets,unicast_xmit_packets,unicast_rcv_packets,multicast_xmit_packets,multicast_rcv_packets,xmit_bytes,rcv_bytes}'::text[])));
