// Runs every enabled detector over one cluster's input.
#pragma once

#include <string>
#include <vector>

#include "analyzer/config.h"
#include "analyzer/finding.h"
#include "analyzer/input_index.h"
#include "analyzer/model.h"

namespace fabtrack::analyzer {

struct AnalysisResult {
  std::string cluster;
  std::vector<Finding> findings;  // ordered by FindingBefore
  std::vector<std::string> detectors_run;
  int judged_runs = 0;
};

AnalysisResult Analyze(const InputIndex& input, const AnalyzerConfig& config);
// Convenience for tests: indexes a copy of `input`.
AnalysisResult Analyze(const AnalysisInput& input, const AnalyzerConfig& config);

// Exit status as monitoring plugins report it: 0 nothing at warning or
// above, 1 warning, 2 critical. (3, could not analyze, is the caller's.)
int ExitStatusOf(const AnalysisResult& result);

}  // namespace fabtrack::analyzer
