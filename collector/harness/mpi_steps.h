// Step mode on the MPI backend: gradients in host memory, each bucket reduced
// with MPI_Iallreduce while a compute loop stands in for the backward pass.
#pragma once

#include <vector>

#include "collector/harness/step_plan.h"
#include "core/run_record.h"

namespace fabtrack::harness {

// Runs warmup and measured steps on every rank of MPI_COMM_WORLD (collective).
// Rank 0 gets one sample per measured step, each figure the slowest rank's;
// the others get an empty vector.
std::vector<StepSample> RunMpiSteps(const StepOptions& options, int rank, int ranks);

// `mine` holds this rank's (step_ms, compute_ms, exposed_ms) per measured
// step; rank 0 gets the slowest rank's figure of each (collective; both
// backends use it).
std::vector<StepSample> SlowestPerStep(const std::vector<double>& mine, int steps, int rank,
                                       int ranks);

}  // namespace fabtrack::harness
