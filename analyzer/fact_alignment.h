// Which changed fact explains a regression (issue 21 item 4)? A change
// point's what_changed lists every fact that differs between the run before
// it and the run at it; over a fleet, several usually do (a kernel rolled out
// everywhere the night one node's firmware was flashed). Each is ranked by how
// well it lines up with the regression across the cluster: over every run
// holding either of the fact's two values, the share whose "has the new value"
// agrees with "is at or after a change point of a regressed series". A fact
// that changed on exactly the runs that regressed scores 1 and ranks first.
// Pure.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "analyzer/input_index.h"
#include "core/finding.h"

namespace fabtrack::analyzer {

// A run's facts by the names what_changed uses: "nccl_version",
// "cuda_version", "driver_version", "network", "gdrdma", each NCCL_*/launcher
// variable by its name and each node fact by its key.
std::map<std::string, std::string> FlatFacts(const RunView& run);

// For every finding with evidence.change_point and a non-empty what_changed,
// adds evidence.what_changed_ranked: [{"fact", "before", "after",
// "alignment"}], best aligned first (ties in name order).
void RankWhatChanged(const InputIndex& input, std::vector<Finding>* findings);

}  // namespace fabtrack::analyzer
