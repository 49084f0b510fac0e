// Runs every enabled detector over one cluster's input.
#pragma once

#include <string>
#include <vector>

#include "analyzer/config.h"
#include "analyzer/input_index.h"
#include "core/analysis_input.h"
#include "core/analysis_result.h"
#include "core/finding.h"

namespace fabtrack::analyzer {

AnalysisResult Analyze(const InputIndex& input, const AnalyzerConfig& config);
// Convenience for tests: indexes a copy of `input`.
AnalysisResult Analyze(const AnalysisInput& input, const AnalyzerConfig& config);

}  // namespace fabtrack::analyzer
