#pragma once

#include <string>
#include <string_view>

namespace fabtrack {

// Lower-case hex SHA-256 of `data`; identifies a run's source content so the
// same file ingested twice is stored once.
std::string Sha256Hex(std::string_view data);

}  // namespace fabtrack
