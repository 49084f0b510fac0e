// What is stored, for `fabtrack runs` and `fabtrack inspector ingest`:
// listing and showing runs (reads bounded by FABTRACK_STATEMENT_TIMEOUT) and
// storing an Inspector job summary. A database that cannot be used prints
// its reason to `err` and throws CommandExit{kExitDatabaseError}.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/database_choice.h"
#include "core/inspector_job.h"
#include "core/json_instances.h"
#include "store/ab_store.h"
#include "store/run_summary.h"

namespace fabtrack::app {

std::vector<store::RunSummary> ListRuns(const DatabaseChoice& choice,
                                        const store::RunFilter& filter, std::ostream& err);

// The stored `sweep --ab` comparisons, newest first.
std::vector<store::AbSummary> ListAbComparisons(const DatabaseChoice& choice,
                                                const store::RunFilter& filter, std::ostream& err);

// One run in full (see store::ReadRunDetail); nullopt when there is none.
std::optional<nlohmann::json> ReadRunDetail(const DatabaseChoice& choice, int64_t run_id,
                                            std::ostream& err);

// `runs delete`: which of `ids` are stored runs and which are not, and
// whether they were deleted.
struct RunDeletion {
  std::vector<int64_t> found, missing;
  bool deleted = false;
};

// Deletes these runs and what hangs off them in one transaction when
// `apply` and every id names a run; otherwise (a dry run, or an id that is
// not there) deletes nothing and says what it found.
RunDeletion DeleteRuns(const DatabaseChoice& choice, const std::vector<int64_t>& ids, bool apply,
                       std::ostream& err);

// Stores `job` for `cluster` in one transaction; false when that job was
// already stored (nothing written). Throws std::runtime_error when the
// database refuses it.
bool StoreInspectorJob(const DatabaseChoice& choice, const std::string& cluster,
                       const InspectorJob& job, const std::string& source_path, std::ostream& err);

}  // namespace fabtrack::app
