// The switch side of sweep runs' windows in PostgreSQL (schema 021): one row
// per run, the window document (core/run_fabric_window.h) and the cables'
// counter deltas beside it.
#pragma once

#include <cstdint>
#include <map>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "core/run_fabric_window.h"

namespace fabtrack::store {

// Stores (or replaces) the run's window.
void WriteRunFabricWindow(pqxx::transaction_base& txn, int64_t run_id,
                          const RunFabricWindow& window);

// The windows of these runs, by run id; a row that no longer reads as a
// window is left out and named in *problems.
std::map<int64_t, RunFabricWindow> ReadRunFabricWindows(pqxx::transaction_base& txn,
                                                        const std::vector<int64_t>& run_ids,
                                                        std::vector<std::string>* problems);

}  // namespace fabtrack::store
