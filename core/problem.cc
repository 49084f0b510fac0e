#include "core/problem.h"

#include "core/clock.h"

namespace fabtrack {

const char* ProblemStateName(ProblemState state) {
  switch (state) {
    case ProblemState::kNew:
      return "new";
    case ProblemState::kOngoing:
      return "ongoing";
    case ProblemState::kRecovered:
      return "recovered";
    case ProblemState::kAcknowledged:
      return "acknowledged";
  }
  return "?";
}

int NightsWithHistory(const ProblemHistory& stored, const std::set<int64_t>& window_nights) {
  const std::optional<double> first = ParseIsoSeconds(stored.first_seen);
  const std::optional<double> last = ParseIsoSeconds(stored.last_seen);
  if (!first || !last) return static_cast<int>(window_nights.size());
  const int64_t first_night = NightOf(*first), last_night = NightOf(*last);
  int nights = stored.nights > 0 ? stored.nights : (first_night == last_night ? 1 : 2);
  for (int64_t night : window_nights) nights += night < first_night || night > last_night;
  return nights;
}

}  // namespace fabtrack
