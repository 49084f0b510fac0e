#include "core/problem.h"

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

}  // namespace fabtrack
