#include "core/run_record.h"

namespace fabtrack {

const char* RunStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kComplete:
      return "complete";
    case RunStatus::kPartial:
      return "partial";
    case RunStatus::kFailed:
      return "failed";
  }
  return "failed";
}

}  // namespace fabtrack
