// `fabtrack sweep --ab`'s comparisons in PostgreSQL (schema 016): the
// verdict, its judgements, and the links to the runs of both sides.
#pragma once

#include <cstdint>
#include <pqxx/transaction_base>

#include "core/ab_comparison.h"
#include "store/record_write.h"

namespace fabtrack::store {

// Stores `record` (its cluster is created when new) and links the runs of
// its cluster tagged ab_id = record.ab_id, with their side and round tags.
// Idempotent by content.
RecordWrite WriteAbComparison(pqxx::transaction_base& txn, const AbRecord& record);

}  // namespace fabtrack::store
