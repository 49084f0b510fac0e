// Per-port counter deltas between two samples (a run's before/after window).
// Pure. Counters that went backwards were reset (driver reload, perfquery -R):
// the delta counts from zero. Legacy narrow counters stuck at their maximum
// saturate instead of counting: their delta is unknown (absent), and marked.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

// `seconds`: the window length (after - before); <= 0 leaves per_second absent.
PortDeltas ComputeDeltas(const HostPorts& before, const HostPorts& after, double seconds);

}  // namespace fabtrack
