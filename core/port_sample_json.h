// The JSON `fabtrack counters snapshot --format json` prints. Pure.
#pragma once

#include <optional>
#include <string>

#include "core/json_instances.h"
#include "core/port_sample.h"

namespace fabtrack {

nlohmann::json HostPortsToJson(const HostPorts& host);

// The inverse, for samples taken on other nodes (`fabtrack sweep` collects
// one snapshot per node). nullopt, with the reason in *why, when a required
// field is missing or mistyped.
std::optional<HostPorts> HostPortsFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
