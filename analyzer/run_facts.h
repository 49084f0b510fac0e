// Small facts about runs that several detectors share.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/input_index.h"
#include "core/analysis_input.h"
#include "core/finding.h"
#include "core/text.h"  // FormatFixed, which the detectors print with

namespace fabtrack::analyzer {

// A finding about `run` with its run fields (id, start, nodes) filled in.
Finding FindingForRun(const RunView& run, std::string subject, Severity severity);

// Did NCCL carry this run (nccl-tests, or the harness's NCCL backend)? The MPI
// backend goes through sockets by design and says nothing about NCCL.
bool UsesNccl(const RunView& run);
bool MultiNode(const RunView& run);

// "1 KiB", "256 MiB": sizes as people write them.
std::string FormatBytes(int64_t bytes);
// A finding's value or baseline as the reports print it: a whole number (a
// count: hosts, ranks, channels) without decimals ("4 hosts", not "4.00
// hosts"), anything else with two ("12.50").
std::string FormatMeasure(double value);
// "7B", "350M", "1.3B": parameter counts as model sizes are quoted.
std::string FormatParams(int64_t params);

// A step-mode run's shape (model, gradient type, bucket, compute times,
// ranks per node, backend), without the node count: runs of one family are
// comparable across node counts and nights.
std::string StepFamilyName(const RunView& run, const StepView& step);

// The step series step_regression judges and the report charts: (family,
// node count) -> its complete, not oversubscribed step runs (compute loops
// sharing CPUs time the scheduler), oldest first.
using StepSeriesMap = std::map<std::pair<std::string, int>, std::vector<const RunView*>>;
StepSeriesMap StepSeries(const InputIndex& input);
// "<family>/8 nodes": a step series' name, the prefix of its findings' subjects.
std::string StepSeriesName(const std::string& family, int nodes);

// The headline figures of a run: busbw over the bandwidth-bound sizes (>= 64
// MiB, or the largest measured when none is that large), time over the
// latency-bound ones (<= 64 KiB).
constexpr int64_t kBusbwHeadlineMinBytes = int64_t{64} << 20;
constexpr int64_t kLatencyHeadlineMaxBytes = int64_t{64} << 10;

// Median over the results of one run within [min_bytes, max_bytes] of
// `metric` (a pointer to an optional<double> member); nullopt when none.
std::optional<double> BandMedian(std::span<const ResultPoint> results, int64_t min_bytes,
                                 int64_t max_bytes, std::optional<double> ResultPoint::*metric);

}  // namespace fabtrack::analyzer
