// Writes runs into PostgreSQL: the run row by parameterized INSERT (deduplicated
// on cluster + content hash + table index), and its bulk child rows through
// COPY. All inside the caller's transaction, so one file is all or nothing.
#pragma once

#include <array>
#include <cstdint>
#include <pqxx/transaction_base>
#include <string>

#include "core/run_record.h"
#include "store/copy_row.h"

namespace fabtrack::store {

struct WriteRunResult {
  int64_t run_id = 0;
  bool inserted = false;  // false: the same content was stored before
  size_t result_rows = 0;
  size_t channel_rows = 0;
};

// Column list of run_results and the one function that turns a ResultRow
// into those fields (ingest and the benchmark share it).
extern const std::array<std::string, 31> kResultColumns;
void AppendResultFields(CopyRow& row, int64_t run_id, int row_index, const ResultRow& result);

// Creates the cluster row if it does not exist yet.
void EnsureCluster(pqxx::transaction_base& txn, const std::string& cluster);

WriteRunResult WriteRun(pqxx::transaction_base& txn, const RunRecord& run);

// Incremental writing for the harness, so a run cut short keeps the sizes it
// measured: BeginRun stores the run row (status as given, usually partial),
// AppendResults adds rows [first_row, ...) with their samples and timings,
// FinishRun sets the final status and trailer fields. Each in its own
// transaction, chosen by the caller.
int64_t BeginRun(pqxx::transaction_base& txn, const RunRecord& run);
void AppendResults(pqxx::transaction_base& txn, int64_t run_id, const RunRecord& run,
                   size_t first_row);
void FinishRun(pqxx::transaction_base& txn, int64_t run_id, const RunRecord& run);

}  // namespace fabtrack::store
