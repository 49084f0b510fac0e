// The JSON of a fabric scan: what `fabtrack fabric scan --format json` prints
// (with the findings beside it) and what `--cluster` stores, read back as the
// previous scan of the next one's window. Pure.
#pragma once

#include <optional>
#include <string>

#include "core/fabric_scan.h"
#include "core/json_instances.h"

namespace fabtrack {

// {"scanned_at", "source", "duration_s", "mads": {...}, "nodes": [...],
//  "links": [{"a": END, "b": END, "width", "speed", "rate_gbps", "state"}],
//  "ports_without_link": [PORT...], "unanswered": [...]}; an END is the
// port (guid, description, port, lid, state, width, speed, counters, ...).
nlohmann::json FabricScanToJson(const FabricScan& scan);

// The inverse. nullopt with the reason in *why (naming the element, e.g.
// "links[3].b.port: not an integer") when the document is not a scan.
std::optional<FabricScan> FabricScanFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
