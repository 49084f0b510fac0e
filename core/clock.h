#pragma once

#include <string>

namespace fabtrack {

// The current time as ISO 8601 UTC with microseconds ("2026-12-01T02:00:00.123456Z"):
// how every timestamp fabtrack records is written.
std::string UtcNowIso();

}  // namespace fabtrack
