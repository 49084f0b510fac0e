// A real training job's collectives as NCCL's Inspector plugin recorded them,
// reduced to what fabtrack keeps: per communicator, collective and size the
// duration and bus-bandwidth distribution and the slowest rank and host (a
// job writes millions of records; the summary is what the analyzer and the
// dashboards compare with the nightly benchmarks).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

struct InspectorCollective {
  std::string communicator, collective;
  int64_t message_bytes = 0;
  std::optional<int> nranks;
  int64_t count = 0;
  double median_us = 0, p90_us = 0, max_us = 0;
  std::optional<double> median_busbw_gbps;
  std::optional<int> slowest_rank;
  std::optional<std::string> slowest_rank_host;
  std::optional<double> slowest_rank_ratio;  // its mean / the median rank's
  std::optional<std::string> slowest_host;
  std::optional<double> slowest_host_ratio;
};

struct InspectorJob {
  std::string job_id;                               // Slurm job id, else the dump directory's name
  std::optional<std::string> started_at, ended_at;  // ISO 8601 UTC, from record timestamps
  std::optional<int> nnodes, nranks;                // the largest communicator's
  std::vector<std::string> hosts;
  int64_t records = 0;
  std::vector<InspectorCollective> collectives;
};

}  // namespace fabtrack
