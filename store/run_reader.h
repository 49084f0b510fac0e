// Reads run summaries back for `fabtrack runs list` (and later the reports).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <vector>

namespace fabtrack::store {

struct RunSummary {
  int64_t id = 0;
  std::string cluster;
  std::string started_at;  // ISO 8601 UTC
  std::string source;
  std::optional<std::string> collective, dtype, network;
  std::optional<int> nodes, ranks;
  std::vector<std::string> transports;
  std::optional<bool> gdrdma;
  int64_t sizes = 0;
  std::optional<double> peak_busbw_gbps;
  std::optional<double> small_latency_us;  // time of the smallest non-zero size
  std::string status;
};

struct RunFilter {
  std::optional<std::string> cluster;
  int limit = 50;
};

std::vector<RunSummary> ListRuns(pqxx::connection_base& connection, const RunFilter& filter);

// One run in full for `fabtrack runs show`: the runs row, its results (by
// size), the log lines it stored (run_log_events, by order), its transport
// families and its findings, each as the database has them (column names as
// keys). nullopt when there is no such run.
std::optional<nlohmann::json> ReadRunDetail(pqxx::connection_base& connection, int64_t run_id);

}  // namespace fabtrack::store
