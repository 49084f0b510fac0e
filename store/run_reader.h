// Reads run summaries back for `fabtrack runs list` (and later the reports).
#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

#include "core/json_instances.h"
#include "store/run_summary.h"

namespace fabtrack::store {

std::vector<RunSummary> ListRuns(pqxx::connection_base& connection, const RunFilter& filter);

// One run in full for `fabtrack runs show`: the runs row, its results (by
// size), the log lines it stored (run_log_events, by order), its transport
// families and its findings, each as the database has them (column names as
// keys). nullopt when there is no such run.
std::optional<nlohmann::json> ReadRunDetail(pqxx::connection_base& connection, int64_t run_id);

}  // namespace fabtrack::store
