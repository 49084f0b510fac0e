// Small facts about runs that several detectors share.
#pragma once

#include <optional>
#include <span>
#include <string>

#include "analyzer/finding.h"
#include "analyzer/model.h"

namespace fabtrack::analyzer {

// A finding about `run` with its run fields (id, start, nodes) filled in.
Finding FindingForRun(const RunView& run, std::string subject, Severity severity);

// Did NCCL carry this run (nccl-tests, or the harness's NCCL backend)? The MPI
// backend goes through sockets by design and says nothing about NCCL.
bool UsesNccl(const RunView& run);
bool MultiNode(const RunView& run);

// "1 KiB", "256 MiB": sizes as people write them.
std::string FormatBytes(int64_t bytes);

// Median over the results of one run within [min_bytes, max_bytes] of
// `metric` (a pointer to an optional<double> member); nullopt when none.
std::optional<double> BandMedian(std::span<const ResultPoint> results, int64_t min_bytes,
                                 int64_t max_bytes, std::optional<double> ResultPoint::*metric);

}  // namespace fabtrack::analyzer
