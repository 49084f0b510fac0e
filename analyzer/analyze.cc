#include "analyzer/analyze.h"

#include <algorithm>

#include "analyzer/detector.h"
#include "analyzer/fabric/run_uplinks.h"
#include "analyzer/fact_alignment.h"
#include "analyzer/input_index.h"
#include "analyzer/problems.h"
#include "analyzer/run_facts.h"
#include "core/clock.h"
#include "core/run_record.h"

namespace fabtrack::analyzer {

AnalysisResult Analyze(const AnalysisInput& input, const AnalyzerConfig& config) {
  return Analyze(InputIndex(input), config);
}

AnalysisResult Analyze(const InputIndex& index, const AnalyzerConfig& config) {
  AnalysisResult result;
  result.cluster = index.cluster().name;
  result.judged_runs = static_cast<int>(index.judged().size());
  result.judged_jobs = static_cast<int>(index.input().inspector_jobs.size());
  result.judged_port_windows = index.input().snapshot_windows;
  result.judged_topologies = static_cast<int>(index.input().fleet_topologies.size());
  for (const RunView* run : index.judged()) {
    result.newest_judged_at =
        std::max(result.newest_judged_at.value_or(run->started_at), run->started_at);
  }
  for (const DetectorInfo& detector : Detectors()) {
    if (!config.Enabled(detector.name)) continue;
    std::vector<Finding> found;
    detector.detect(index, config.SettingsFor(detector.name), &found);
    for (Finding& f : found) {
      if (f.kind.empty()) f.kind = detector.name;
      result.findings.push_back(std::move(f));
    }
    result.detectors_run.push_back(detector.name);
  }
  // Each change point's changed facts, ranked by how well they line up with
  // the regressions across the cluster.
  RankWhatChanged(index, &result.findings);
  // One cause, one problem: no RDMA is also a socket fallback.
  LinkSharedCauses(&result.findings);
  // A run's symptom beside the uplinks that errored during it.
  fabric_analysis::CiteRunUplinks(&result.findings);
  std::stable_sort(result.findings.begin(), result.findings.end(), FindingBefore);
  // No acknowledgements here (they live in the database): the caller folds
  // again with them.
  result.problems = FoldProblems(
      result, {}, IsoFromSeconds(result.newest_judged_at.value_or(0), IsoStyle::kSeconds));
  for (const RunView* run : index.judged()) {
    const StepView* step = index.Step(run->id);
    if (!step) continue;
    TrainingLine line;
    line.run_id = run->id;
    line.run_started_at = run->started_at_iso;
    line.family = StepFamilyName(*run, *step);
    line.nodes = run->nodes.value_or(1);
    line.gpus = run->ranks.value_or(1);
    line.step_ms_p50 = step->step_ms_p50;
    line.compute_ms_p50 = step->compute_ms_p50;
    line.exposed_ms_p50 = step->exposed_ms_p50;
    line.idle_share_p50 = step->idle_share_p50;
    line.gpu_hours_per_1000_steps = LostGpuHoursPer1000Steps(step->exposed_ms_p50, line.gpus);
    result.training.push_back(std::move(line));
  }
  return result;
}

}  // namespace fabtrack::analyzer
