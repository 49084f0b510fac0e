#include "analyzer/run_facts.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "core/statistics.h"

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

std::string FormatMeasure(double value) {
  const bool whole = std::isfinite(value) && std::fabs(value) < 1e15 && value == std::trunc(value);
  return FormatFixed(value, whole ? 0 : 2);
}

std::string FormatParams(int64_t params) {
  static const std::pair<double, const char*> kScales[] = {
      {1e12, "T"}, {1e9, "B"}, {1e6, "M"}, {1e3, "K"}};
  for (const auto& [scale, suffix] : kScales) {
    if (static_cast<double>(params) >= scale) {
      double v = static_cast<double>(params) / scale;
      char buf[32];
      std::snprintf(buf, sizeof buf, v == static_cast<int64_t>(v) ? "%.0f%s" : "%.1f%s", v, suffix);
      return buf;
    }
  }
  return std::to_string(params);
}

std::string StepFamilyName(const RunView& run, const StepView& step) {
  return "ddp_step/" + FormatParams(step.model_params) + " " + step.grad_dtype + "/bucket " +
         FormatBytes(step.bucket_bytes) + "/fwd " + FormatFixed(step.forward_ms, 1) + " ms bwd " +
         FormatFixed(step.backward_ms, 1) + " ms/" +
         (run.ranks_per_node ? std::to_string(*run.ranks_per_node) + " per node/" : "") +
         run.source + (run.backend ? ":" + *run.backend : "");
}

StepSeriesMap StepSeries(const InputIndex& input) {
  StepSeriesMap series;
  for (const RunView& run : input.runs()) {
    const StepView* step = input.Step(run.id);
    if (!step || run.status != "complete" || run.oversubscribed) continue;
    series[{StepFamilyName(run, *step), run.nodes.value_or(1)}].push_back(&run);
  }
  for (auto& [key, runs] : series) {
    std::stable_sort(runs.begin(), runs.end(), [](const RunView* a, const RunView* b) {
      return a->started_at != b->started_at ? a->started_at < b->started_at : a->id < b->id;
    });
  }
  return series;
}

std::string StepSeriesName(const std::string& family, int nodes) {
  return family + "/" + std::to_string(nodes) + (nodes == 1 ? " node" : " nodes");
}

}  // namespace fabtrack::analyzer
