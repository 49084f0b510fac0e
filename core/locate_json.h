// `fabtrack locate --format json`: the verdict as one document,
//   {"suspects": [{"kind", "name", "score", "evidence": [...]}], "rounds": N,
//    "seconds": S, "settled": bool, "nodes": N, "probes": N,
//    "busbw_spread": x, "latency_spread": x}
// (spreads: scaled MAD / median of the healthy probes).
#pragma once

#include <nlohmann/json.hpp>

#include "core/locate.h"

namespace fabtrack {

nlohmann::json LocateVerdictToJson(const LocateVerdict& verdict, double seconds, int nodes,
                                   int probes);

}  // namespace fabtrack
