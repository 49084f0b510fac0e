// `fabtrack sweep --ab`'s comparisons in PostgreSQL (schema 016): the
// verdict, its judgements, and the links to the runs of both sides.
#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "core/ab_comparison.h"
#include "store/record_write.h"

namespace fabtrack::store {

// Stores `record` (its cluster is created when new) and links the runs of
// its cluster tagged ab_id = record.ab_id, with their side and round tags.
// Idempotent by content.
RecordWrite WriteAbComparison(pqxx::transaction_base& txn, const AbRecord& record);

// A stored comparison in brief, for `fabtrack runs ab`.
struct AbSummary {
  int64_t id = 0;
  std::string cluster;
  std::string ab_id;
  std::string compared_at;  // RFC 3339 UTC
  std::string setting;
  int rounds = 0;
  std::string order;
  std::string outcome;
  std::vector<int64_t> run_ids;  // its linked runs, by round then side
};

// The newest comparisons first, of one cluster or all.
std::vector<AbSummary> ListAbComparisons(pqxx::connection_base& connection,
                                         const std::optional<std::string>& cluster, int limit);

}  // namespace fabtrack::store
