// job_fabric (warning; critical from critical_drop): a real training job
// (NCCL Inspector, `fabtrack inspector ingest`) whose collectives ran well
// below what the nightly benchmarks of the same node count measure on the
// same message size: the job ran on a degraded fabric, or on a bad node the
// nightly sweep did not include. Per job, the collective and size furthest
// below its baseline is reported, with the job's slowest host.
//
// Baseline: the newest baseline_runs benchmark runs (nccl-tests or the
// harness) of the same collective on the job's node count that started
// before the job ended (and at most lookback_days before), their busbw at the
// job's size (nccl-tests counts all_gather and reduce_scatter sizes over all
// ranks, Inspector per rank: the size is scaled by the rank count), the
// nearest size within a factor of two. Sizes below min_bytes are latency
// bound in a busy job and are not compared.
#include <algorithm>
#include <cmath>
#include <vector>

#include "analyzer/detector.h"
#include "analyzer/run_facts.h"
#include "core/statistics.h"

namespace fabtrack::analyzer::job_fabric_detector {
namespace {

struct Settings {
  double max_drop, critical_drop, min_bytes, min_count, baseline_runs, lookback_days;
};

Settings Read(const DetectorSettings& s) {
  return {.max_drop = s["max_drop"],
          .critical_drop = s["critical_drop"],
          .min_bytes = s["min_bytes"],
          .min_count = s["min_count"],
          .baseline_runs = s["baseline_runs"],
          .lookback_days = s["lookback_days"]};
}

// nccl-tests' size for the group: the buffer for all_reduce, all ranks'
// data for all_gather / reduce_scatter.
int64_t BenchmarkSize(const InspectorGroupView& g, const InspectorJobView& job) {
  if (g.collective == "all_gather" || g.collective == "reduce_scatter") {
    return g.message_bytes * g.nranks.value_or(job.nranks.value_or(1));
  }
  return g.message_bytes;
}

// The run's busbw at the size nearest `size` within a factor of two.
std::optional<double> BusbwNear(std::span<const ResultPoint> results, int64_t size) {
  std::optional<double> best;
  double distance = 1.0 + 1e-9;  // log2 units
  for (const ResultPoint& r : results) {
    if (!r.busbw_gbps || r.size_bytes <= 0) continue;
    double d = std::fabs(std::log2(static_cast<double>(r.size_bytes) / static_cast<double>(size)));
    if (d <= distance) {
      distance = d;
      best = r.busbw_gbps;
    }
  }
  return best;
}

struct Compared {
  const InspectorGroupView* group;
  double busbw, baseline;
  int runs;
  double ratio() const { return busbw / baseline; }
};

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const Settings s = Read(settings);
  for (const InspectorJobView& job : input.input().inspector_jobs) {
    if (!job.nnodes) continue;
    const double job_end = job.ended_at.value_or(job.started_at.value_or(job.ingested_at));
    std::vector<Compared> compared;
    for (const InspectorGroupView& g : job.groups) {
      if (!g.median_busbw_gbps || *g.median_busbw_gbps <= 0 ||
          static_cast<double>(g.message_bytes) < s.min_bytes ||
          static_cast<double>(g.count) < s.min_count) {
        continue;
      }
      const int64_t size = BenchmarkSize(g, job);
      std::vector<double> baseline;
      for (auto it = input.runs().rbegin(); it != input.runs().rend(); ++it) {
        const RunView& run = *it;
        if (run.status != "complete" || run.collective != g.collective || run.nodes != job.nnodes ||
            run.started_at > job_end || run.started_at < job_end - s.lookback_days * 86400) {
          continue;
        }
        if (auto bw = BusbwNear(input.Results(run.id), size)) baseline.push_back(*bw);
        if (baseline.size() >= static_cast<size_t>(s.baseline_runs)) break;
      }
      auto median = stats::Median(baseline);
      if (!median || *median <= 0) continue;
      compared.push_back({&g, *g.median_busbw_gbps, *median, static_cast<int>(baseline.size())});
    }
    if (compared.empty()) continue;
    const Compared& worst = *std::min_element(
        compared.begin(), compared.end(),
        [](const Compared& a, const Compared& b) { return a.ratio() < b.ratio(); });
    const double drop = 1 - worst.ratio();
    if (drop < s.max_drop) continue;
    const InspectorGroupView& g = *worst.group;
    Finding f;
    f.subject = "job " + job.job_id;
    f.severity = drop >= s.critical_drop ? Severity::kCritical : Severity::kWarning;
    f.nodes = job.nnodes;
    f.size_bytes = g.message_bytes;
    f.value = worst.busbw;
    f.baseline = worst.baseline;
    f.unit = "GB/s busbw (median of the job's operations)";
    f.message = "job " + job.job_id + " ran on a degraded fabric: " + g.collective + " " +
                FormatBytes(g.message_bytes) + " at " + FormatFixed(worst.busbw, 1) +
                " GB/s busbw against " + FormatFixed(worst.baseline, 1) +
                " GB/s in the nightly benchmarks on " + std::to_string(*job.nnodes) + " nodes (-" +
                FormatFixed(drop * 100, 0) + "%, median of " + std::to_string(worst.runs) +
                " runs)";
    if (g.slowest_host && g.slowest_host_ratio && *g.slowest_host_ratio >= 1.2) {
      f.host = g.slowest_host;
      f.message += "; slowest host " + *g.slowest_host + " (" +
                   FormatFixed(*g.slowest_host_ratio, 2) + "x the median rank's time";
      if (g.slowest_rank && g.slowest_rank_ratio) {
        f.message += ", rank " + std::to_string(*g.slowest_rank) + " " +
                     FormatFixed(*g.slowest_rank_ratio, 2) + "x";
      }
      f.message += ")";
    }
    nlohmann::json groups = nlohmann::json::array();
    for (const Compared& c : compared) {
      groups.push_back({{"collective", c.group->collective},
                        {"message_bytes", c.group->message_bytes},
                        {"busbw_gbps", c.busbw},
                        {"baseline_gbps", c.baseline},
                        {"baseline_runs", c.runs}});
    }
    f.evidence = {{"inspector_job", job.id}, {"compared", groups}};
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "job_fabric",
    .summary = "a training job's collectives (NCCL Inspector) well below the nightly benchmarks of "
               "the same node count and size: the job ran on a degraded fabric (warning)",
    .params =
        {
            {"max_drop", 0.3, "flag a job busbw this share below the nightly baseline"},
            {"critical_drop", 0.6, "a drop at least this large is critical"},
            {"min_bytes", 1048576, "compare sizes from this many bytes (per rank)"},
            {"min_count", 5, "operations of a collective and size needed"},
            {"baseline_runs", 5, "newest benchmark runs in the baseline"},
            {"lookback_days", 30, "baseline runs at most this many days before the job"},
        },
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::job_fabric_detector
