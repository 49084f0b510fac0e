// Writes runs into PostgreSQL: the run row by parameterized INSERT (deduplicated
// on cluster + content hash + table index), and its bulk child rows through
// COPY. All inside the caller's transaction, so one file is all or nothing.
#pragma once

#include <cstdint>
#include <pqxx/transaction_base>
#include <string>

#include "core/run_record.h"

namespace fabtrack::store {

struct WriteRunResult {
  int64_t run_id = 0;
  bool inserted = false;  // false: the same content was stored before
  size_t result_rows = 0;
  size_t channel_rows = 0;
};

// Creates the cluster row if it does not exist yet.
void EnsureCluster(pqxx::transaction_base& txn, const std::string& cluster);

WriteRunResult WriteRun(pqxx::transaction_base& txn, const RunRecord& run);

}  // namespace fabtrack::store
