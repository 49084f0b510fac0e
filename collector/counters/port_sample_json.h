// The JSON `fabtrack counters snapshot --format json` prints. Pure.
#pragma once

#include <nlohmann/json.hpp>

#include "core/port_sample.h"

namespace fabtrack {

nlohmann::json HostPortsToJson(const HostPorts& host);

}  // namespace fabtrack
