#include "analyzer/analyze.h"

#include <algorithm>

#include "analyzer/detector.h"
#include "analyzer/input_index.h"

namespace fabtrack::analyzer {

AnalysisResult Analyze(const AnalysisInput& input, const AnalyzerConfig& config) {
  return Analyze(InputIndex(input), config);
}

AnalysisResult Analyze(const InputIndex& index, const AnalyzerConfig& config) {
  AnalysisResult result;
  result.cluster = index.cluster().name;
  result.judged_runs = static_cast<int>(index.judged().size());
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
  std::stable_sort(result.findings.begin(), result.findings.end(), FindingBefore);
  return result;
}

int ExitStatusOf(const AnalysisResult& result) {
  int status = 0;
  for (const Finding& f : result.findings) {
    if (f.severity == Severity::kCritical) return 2;
    if (f.severity == Severity::kWarning) status = 1;
  }
  return status;
}

}  // namespace fabtrack::analyzer
