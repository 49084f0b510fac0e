// `fabtrack analyze --format html`: one self-contained page (inline CSS and
// SVG, no script, nothing fetched) for the morning check: the findings with
// their evidence, the newest `fabtrack locate` verdicts (suspects in plain
// words, rounds, seconds), what the network costs the simulated training step (step
// mode: step time split into compute and exposed communication per node
// count, lost GPU-hours; only when step runs were judged), tonight's busbw
// curve against the history band per node count, each series' busbw trend in
// the large and medium bands with its change points, the scaling-efficiency curve, latency
// percentiles, and a port health table. Pure.
#pragma once

#include <string>

#include "analyzer/analyze.h"
#include "analyzer/input_index.h"

namespace fabtrack::analyzer {

std::string RenderHtmlReport(const InputIndex& input, const AnalysisResult& result);

}  // namespace fabtrack::analyzer
