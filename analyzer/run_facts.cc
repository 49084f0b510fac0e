#include "analyzer/run_facts.h"

#include <cmath>
#include <cstdio>
#include <vector>

#include "analyzer/stats/robust.h"

namespace fabtrack::analyzer {

Finding FindingForRun(const RunView& run, std::string subject, Severity severity) {
  Finding f;
  f.severity = severity;
  f.subject = std::move(subject);
  f.run_id = run.id;
  f.run_started_at = run.started_at_iso;
  f.nodes = run.nodes;
  return f;
}

bool UsesNccl(const RunView& run) {
  if (run.backend) return *run.backend == "nccl";
  return run.source != "fabtrack-allreduce";
}

bool MultiNode(const RunView& run) {
  if (run.nodes) return *run.nodes > 1;
  return run.hosts.size() > 1;
}

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int unit = 0;
  while (v >= 1024 && unit < 4) {
    v /= 1024;
    ++unit;
  }
  char buf[32];
  if (v == static_cast<int64_t>(v)) {
    std::snprintf(buf, sizeof buf, "%lld %s", static_cast<long long>(v), kUnits[unit]);
  } else {
    std::snprintf(buf, sizeof buf, "%.1f %s", v, kUnits[unit]);
  }
  return buf;
}

std::optional<double> BandMedian(std::span<const ResultPoint> results, int64_t min_bytes,
                                 int64_t max_bytes, std::optional<double> ResultPoint::*metric) {
  std::vector<double> values;
  for (const ResultPoint& r : results) {
    if (r.size_bytes < min_bytes || r.size_bytes > max_bytes) continue;
    if (const auto& v = r.*metric; v && std::isfinite(*v)) values.push_back(*v);
  }
  return stats::Median(std::move(values));
}

}  // namespace fabtrack::analyzer
