// AbRecord as JSON: what `fabtrack sweep --ab ... --format json` prints and
// the spool keeps when the database is away:
//   {"cluster", "ab_id", "compared_at", "setting", "rounds", "order",
//    "outcome", "headlines": [J...], "sizes": [J...]}
// with J = {"collective", "nodes", "metric", "size_bytes" (null: headline),
//           "a": [...], "b": [...], "ratio", "ratio_low", "ratio_high",
//           "noise", "outcome"}.
#pragma once

#include <optional>
#include <string>

#include "core/ab_comparison.h"
#include "core/json_instances.h"

namespace fabtrack {

nlohmann::json AbRecordToJson(const AbRecord& record);
// nullopt with the reason in `why` when a field is missing or of the wrong type.
std::optional<AbRecord> AbRecordFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
