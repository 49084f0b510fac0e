// `fabtrack locate`'s verdicts in PostgreSQL (schema 011): writing one with
// its suspects and linked runs, reading the newest back (the analyzer's
// input, the report), and the runs a night's analysis flagged (what locate
// is run for by the nightly job).
#pragma once

#include <cstdint>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "core/locate.h"
#include "store/record_write.h"

namespace fabtrack::store {

// Stores `record` (its cluster is created when new). Links the runs of
// record.run_ids and of record.sweep_id that belong to the cluster; ids of
// other clusters or of deleted runs are skipped. Idempotent by content.
RecordWrite WriteLocateVerdict(pqxx::transaction_base& txn, const LocateRecord& record);

// A stored verdict as read back: its id, when (epoch seconds), the record.
struct StoredLocate {
  int64_t id = 0;
  double located_at = 0;
  LocateRecord record;
};

// The cluster's newest `limit` verdicts, newest first, with their suspects
// (in rank order) and linked runs.
std::vector<StoredLocate> ReadLocateVerdicts(pqxx::transaction_base& txn,
                                             const std::string& cluster, int limit);

// The runs of `cluster` started at or after `since` (RFC 3339) that an open
// finding of one of `kinds` names, oldest first.
std::vector<int64_t> ReadFlaggedRuns(pqxx::transaction_base& txn, const std::string& cluster,
                                     const std::string& since,
                                     const std::vector<std::string>& kinds);

}  // namespace fabtrack::store
