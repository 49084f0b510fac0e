-- The moved port deltas of a judged run (migration 010's run_port_deltas_moved,
-- same condition: store/analysis_reader.cc kMovedPortDelta) with the columns
-- the analyzer reads kept in the index, so that the newest night reads them
-- by an index-only scan. Through 010's index every row was a heap fetch: a
-- 4096-node x 8-HCA night's 32,768 moved rows lie one in 27 across the
-- night's ~11,000 heap pages (884,736 rows), 250 ms of the server's CPU, the
-- largest share of the newest night's (BENCHMARKS.md, "Analyzer at scale");
-- this index reads ~350 pages. It replaces 010's, which it serves as well.
CREATE INDEX run_port_deltas_moved_rows ON run_port_deltas (run_id)
  INCLUDE (port_id, counter, delta, per_second, saturated)
  WHERE (saturated OR (delta IS DISTINCT FROM 0 AND counter <> ALL ('{port_xmit_data,port_rcv_data,port_xmit_packets,port_rcv_packets,unicast_xmit_packets,unicast_rcv_packets,multicast_xmit_packets,multicast_rcv_packets,xmit_bytes,rcv_bytes}'::text[])));
DROP INDEX run_port_deltas_moved;
-- An index-only scan skips the heap only for pages the visibility map marks
-- all-visible, which a vacuum sets; with the default insert threshold (20% of
-- the table) a table of months of nights would hold each new night's rows
-- unvacuumed for weeks, and the analyzer would fetch them from the heap as
-- before. Vacuumed after every 100,000 rows inserted (a 4096-node night is
-- ~900,000), a night's rows are all-visible within about a minute of being
-- written (autovacuum_naptime); such a vacuum visits only the new pages.
ALTER TABLE run_port_deltas SET (autovacuum_vacuum_insert_threshold = 100000,
                                 autovacuum_vacuum_insert_scale_factor = 0);
