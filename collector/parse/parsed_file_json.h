// The JSON shape `fabtrack parse --format json` prints for one file.
#pragma once

#include <nlohmann/json.hpp>

#include "core/model.h"

namespace fabtrack {

nlohmann::json ParsedFileToJson(const ParsedFile& parsed);

}  // namespace fabtrack
