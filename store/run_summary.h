// A stored run in brief, as `fabtrack runs list` shows it (read by
// store/run_reader).
#pragma once

#include <cstdint>
#include <optional>
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

}  // namespace fabtrack::store
