// `fabtrack locate --format json`: the verdict as one document,
//   {"suspects": [{"kind", "name", "score", "evidence": [...]}], "rounds": N,
//    "seconds": S, "settled": bool, "nodes": N, "probes": N,
//    "busbw_spread": x, "latency_spread": x, "confidence": 0..1, "notes": [...]}
// (spreads: scaled MAD / median of the healthy probes; confidence and notes:
// LocateVerdict's).
// A stored locate (LocateRecord) is that document plus where and when:
//   {"cluster", "located_at", "hosts", "exit_status", "budget_spent",
//    "sweep_id" (or null), "run_ids", "verdict": {the document above}}
// which the spool keeps when the database is away.
#pragma once

#include <optional>
#include <string>

#include "core/json_instances.h"
#include "core/locate.h"

namespace fabtrack {

nlohmann::json LocateVerdictToJson(const LocateVerdict& verdict, double seconds, int nodes,
                                   int probes);

nlohmann::json LocateRecordToJson(const LocateRecord& record);
// nullopt with the reason in `why` when a field is missing or of the wrong type.
std::optional<LocateRecord> LocateRecordFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
