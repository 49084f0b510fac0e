#include "core/run_record.h"

namespace fabtrack {

// The special members, out of line (the header says why).
RunRecord::RunRecord() = default;
RunRecord::RunRecord(const RunRecord&) = default;
RunRecord::RunRecord(RunRecord&&) noexcept = default;
RunRecord& RunRecord::operator=(const RunRecord&) = default;
RunRecord& RunRecord::operator=(RunRecord&&) noexcept = default;
RunRecord::~RunRecord() = default;

bool IsRecordedEnvironmentVariable(const std::string& name) {
  // Container images (NGC, PyTorch's) set NCCL_VERSION to the NCCL they
  // shipped; NCCL reads no such setting, and the library actually loaded may
  // differ (2.28.3 in the image, 2.28.9 loaded): the run's nccl_version is
  // the loaded one, and this label is not an NCCL setting.
  if (name == "NCCL_VERSION") return false;
  // What mpirun/orted hand each rank (job ids, daemon URIs, session dirs, and
  // orte_precondition_transports, a per-job key): launcher plumbing that
  // differs every run, not settings, and the key is not to be stored.
  for (const char* launcher : {"OMPI_MCA_orte_", "OMPI_MCA_ess", "OMPI_MCA_pmix",
                               "OMPI_MCA_initial_wdir", "OMPI_MCA_shmem_RUNTIME_QUERY_hint"}) {
    if (name.rfind(launcher, 0) == 0) return false;
  }
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
