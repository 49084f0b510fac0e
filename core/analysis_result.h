// What one analysis concluded: the findings, and the training view of the
// step-mode runs it judged. Produced by the analyzer, persisted by
// store/findings_writer, rendered by the reports.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/finding.h"
#include "core/problem.h"

namespace fabtrack {

// What the network costs a judged step-mode run, findings or not: the
// report's training view.
struct TrainingLine {
  int64_t run_id = 0;
  std::string run_started_at, family;
  int nodes = 0, gpus = 0;
  double step_ms_p50 = 0, compute_ms_p50 = 0, exposed_ms_p50 = 0, idle_share_p50 = 0;
  double gpu_hours_per_1000_steps = 0;
};

struct AnalysisResult {
  std::string cluster;
  std::vector<Finding> findings;       // ordered by FindingBefore
  std::vector<TrainingLine> training;  // judged step-mode runs, oldest first
  std::vector<std::string> detectors_run;
  int judged_runs = 0;
  int judged_jobs = 0;  // NCCL Inspector jobs (real training jobs)
  // Windows between two snapshots of a port that no run brackets (imported
  // dumps), ending in the judged span.
  int judged_port_windows = 0;
  // Nodes whose stored wiring (`fabtrack topology ingest`) the fleet diff
  // compared: judged on every analysis, runs or not.
  int judged_topologies = 0;
  // The newest judged run's start (epoch seconds): its night is "tonight"
  // for the problems (analyzer/problems.h).
  std::optional<double> newest_judged_at;
  // The findings folded into problems (analyzer/problems.h), acknowledgements
  // applied when the caller had them: what the outputs lead with.
  std::vector<Problem> problems;
};

// Exit status as monitoring plugins report it: 0 nothing at warning or
// above, 1 warning, 2 critical. (3, could not analyze, is the caller's.)
int ExitStatusOf(const AnalysisResult& result);

}  // namespace fabtrack
