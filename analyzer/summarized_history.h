// Summarised history (schema 015, issue 18): which runs' result rows a
// nightly analysis still needs when the store keeps, per run, the figures the
// detectors derived from it (InputIndex::Summary). The reader marks the runs
// older than the cut as summarised; this says which of those must be read in
// full all the same, for the windows that tonight's checks fit.
//
// Exactness: with summaries the findings are those of the full history. A
// figure or a row that the summarised input lacks throws SummaryMiss and the
// caller analyses again with the full history (never a guess).
#pragma once

#include <cstdint>
#include <vector>

#include "analyzer/config.h"
#include "core/analysis_input.h"

namespace fabtrack::analyzer {

// Ids of the runs whose result rows the analysis of `input` (runs marked
// summarized or not; no results yet) needs: every run not summarised; per
// series the newest summarised runs that a series regression's first
// recomputed window reaches (baseline_runs + 1, more when oversubscribed
// runs are skipped) and the port detectors' two-week busbw baseline; every
// run of a scaling sweep that has a run not summarised.
std::vector<int64_t> RunsNeedingResults(const AnalysisInput& input, const AnalyzerConfig& config);

}  // namespace fabtrack::analyzer
