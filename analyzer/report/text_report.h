// `fabtrack analyze` default output: what a person reads in the morning or in
// a Slurm mail — one line per finding, worst first.
#pragma once

#include <string>

#include "analyzer/analyze.h"

namespace fabtrack::analyzer {

std::string TextReport(const AnalysisResult& result, const std::string& judged_from_iso);

}  // namespace fabtrack::analyzer
