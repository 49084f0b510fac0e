// What a harness run records about where and how it ran: hosts and shape,
// versions, the NCCL/MPI environment, Slurm ids, the command line.
#pragma once

#include <string>
#include <vector>

#include "collector/harness/backend.h"
#include "collector/harness/harness_options.h"
#include "core/run_record.h"

namespace fabtrack::harness {

// `hosts`: every rank's hostname in rank order. Reads the environment.
RunRecord DescribeRun(const HarnessOptions& options, const std::vector<std::string>& hosts,
                      const BackendInfo& info, int argc, char** argv);

}  // namespace fabtrack::harness
