#include "analyzer/summarized_history.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>

#include "analyzer/input_index.h"
#include "core/clock.h"

namespace fabtrack::analyzer {

std::vector<int64_t> RunsNeedingResults(const AnalysisInput& input, const AnalyzerConfig& config) {
  std::set<int64_t> ids;
  // Per series, the newest summarised runs: the first verdict recomputed
  // after the cut fits windows of baseline_runs runs before it and before
  // the run before it; port findings compare with the newest 14.
  int window = 15;
  for (const char* detector :
       {"busbw_regression", "latency_regression", "midsize_busbw_regression"}) {
    if (!config.Enabled(detector)) continue;
    window = std::max(window, static_cast<int>(config.SettingsFor(detector)["baseline_runs"]) + 1);
  }
  std::map<std::string, std::vector<const RunView*>> series;
  std::map<std::pair<std::string, std::string>, std::vector<const RunView*>> sweeps;
  std::set<std::pair<std::string, std::string>> live_sweeps;
  for (const RunView& run : input.runs) {
    if (!run.summarized) ids.insert(run.id);
    series[SeriesName(run)].push_back(&run);
    // scaling_drop's sweeps (by sweep id, else by night): a sweep judged
    // tonight (or not summarised) is measured from all of its runs' rows.
    const std::pair<std::string, std::string> sweep = {
        ScalingFamilyName(run),
        run.sweep_id ? "id:" + *run.sweep_id : "night:" + std::to_string(NightOf(run.started_at))};
    sweeps[sweep].push_back(&run);
    if (!run.summarized) live_sweeps.insert(sweep);
  }
  for (auto& [name, runs] : series) {
    std::stable_sort(runs.begin(), runs.end(), [](const RunView* a, const RunView* b) {
      return a->started_at != b->started_at ? a->started_at < b->started_at : a->id < b->id;
    });
    // Newest summarised runs, counting the ones latency_regression and
    // midsize_busbw_regression keep (oversubscribed runs are left out of
    // their series).
    int all = 0, kept = 0;
    for (auto it = runs.rbegin(); it != runs.rend() && (all < window || kept < window); ++it) {
      if (!(*it)->summarized) continue;
      ids.insert((*it)->id);
      ++all;
      if (!(*it)->oversubscribed) ++kept;
    }
  }
  for (const auto& sweep : live_sweeps) {
    for (const RunView* run : sweeps.at(sweep)) ids.insert(run->id);
  }
  // job_fabric: the benchmark runs of a judged job's node count and
  // collectives in its lookback window (it takes the newest of them).
  if (config.Enabled("job_fabric")) {
    const double lookback = config.SettingsFor("job_fabric")["lookback_days"] * 86400;
    for (const InspectorJobView& job : input.inspector_jobs) {
      if (!job.nnodes) continue;
      const double end = job.ended_at.value_or(job.started_at.value_or(job.ingested_at));
      std::set<std::string> collectives;
      for (const InspectorGroupView& g : job.groups) collectives.insert(g.collective);
      for (const RunView& run : input.runs) {
        if (run.nodes == job.nnodes && run.collective && collectives.contains(*run.collective) &&
            run.started_at <= end && run.started_at >= end - lookback) {
          ids.insert(run.id);
        }
      }
    }
  }
  return {ids.begin(), ids.end()};
}

}  // namespace fabtrack::analyzer
