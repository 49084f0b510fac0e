// `fabtrack diff RUN_A RUN_B`: what differs between two stored runs, the
// facts first (versions, settings, network, hosts, benchmark flags), then
// the numbers (busbw at the largest common size, time at the smallest).
// Pure: over the run documents `fabtrack runs show` prints.
#pragma once

#include <string>
#include <vector>

#include "core/json_instances.h"

namespace fabtrack::analyzer {

struct FactChange {
  std::string name;              // "nccl_version", "NCCL_IB_QPS_PER_CONNECTION", "hosts"
  nlohmann::json before, after;  // null: not recorded / unset
};

struct MetricChange {
  std::string name;  // "busbw at 1 GiB", "time at 8 B"
  int64_t size_bytes = 0;
  double before = 0, after = 0;
  std::string unit;  // "GB/s", "us"
};

struct RunDiff {
  std::vector<FactChange> facts;
  std::vector<MetricChange> metrics;
};

// `a` and `b` as store::ReadRunDetail returns them ({"run": {...},
// "results": [...], "transports": [...]}).
RunDiff DiffRuns(const nlohmann::json& a, const nlohmann::json& b);

std::string RunDiffText(const nlohmann::json& a, const nlohmann::json& b, const RunDiff& diff);
nlohmann::json RunDiffJson(const nlohmann::json& a, const nlohmann::json& b, const RunDiff& diff);

}  // namespace fabtrack::analyzer
