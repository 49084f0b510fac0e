// Counter deltas between consecutive stored snapshots of a port that no run
// brackets: `fabtrack import` of dumps taken at two times, `counters snapshot
// --store`. A sweep's bracket gives its run a window of its own; two
// snapshots of one port give the span between them the same window, in the
// same table (run_port_deltas with run_id NULL, migration 014), by the same
// code (core/counter_deltas.h: a reset counts from zero, a saturated legacy
// counter has no delta), so that the analyzer's port detectors judge them.
#pragma once

#include <cstddef>
#include <pqxx/transaction_base>
#include <string>

#include "core/port_sample.h"

namespace fabtrack::store {

// After `host`'s snapshot at `sampled_at` is written (WriteHostSample, phase
// "snapshot", no run): for each of its ports, the window from the port's
// previous stored snapshot to this one and from this one to the next (a dump
// imported late lands between two stored ones and replaces the window that
// spanned it). Deltas are computed from what is stored, so re-importing a
// file rewrites the same rows. Returns the windows written.
size_t WriteSnapshotPortDeltas(pqxx::transaction_base& txn, const std::string& cluster,
                               const HostPorts& host, const std::string& sampled_at);

}  // namespace fabtrack::store
