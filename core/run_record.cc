#include "core/run_record.h"

namespace fabtrack {

bool IsRecordedEnvironmentVariable(const std::string& name) {
  for (const char* prefix : {"NCCL_", "UCX_", "OMPI_MCA_", "FI_", "CUDA_VISIBLE_DEVICES"}) {
    if (name.rfind(prefix, 0) == 0) return true;
  }
  return false;
}

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
