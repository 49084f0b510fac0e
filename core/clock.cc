#include "core/clock.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace fabtrack {

std::string UtcNowIso() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  long long us =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char date[40];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%06lldZ", date, us);
  return out;
}

}  // namespace fabtrack
