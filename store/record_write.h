// What storing a verdict record (a `fabtrack locate` verdict, a `sweep --ab`
// comparison) did. Both are stored idempotently by content, so that a spool
// replay of a record already stored adds nothing, and both link the runs
// they were measured with.
#pragma once

#include <cstdint>

namespace fabtrack::store {

struct RecordWrite {
  int64_t id = 0;         // the record's row
  bool inserted = false;  // false: this very record was stored before (a spool replay)
  int linked_runs = 0;
};

}  // namespace fabtrack::store
