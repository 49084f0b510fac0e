// Built when CUDA/NCCL are not found: the harness still runs with --backend mpi.
#include "collector/harness/backend.h"

namespace fabtrack::harness {

bool NcclBackendCompiled() { return false; }

std::unique_ptr<AllReduceBackend> MakeNcclBackend(const HarnessOptions&, const RankPlacement&,
                                                  std::string* why) {
  *why = "this fabtrack-allreduce was built without CUDA/NCCL";
  return nullptr;
}

}  // namespace fabtrack::harness
