// What a collective backend does for the harness. The driver (MPI ranks,
// timing aggregation, output) is shared; a backend only moves and checks data.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "collector/harness/harness_options.h"
#include "collector/harness/step_plan.h"
#include "core/run_record.h"

namespace fabtrack::harness {

struct BackendInfo {
  std::string device;  // "CPU" or the GPU model
  std::string bus_id;  // "host" or the GPU's PCI id
  int device_index = -1;
  std::string nccl_version, cuda_version, driver_version;
};

class AllReduceBackend {
 public:
  virtual ~AllReduceBackend() = default;
  virtual const char* name() const = 0;
  // Allocates buffers for messages of up to max_bytes.
  virtual void Prepare(int64_t max_bytes) = 0;
  // Writes the check pattern for `count` elements into the input buffer.
  virtual void FillInputs(int64_t count, bool in_place) = 0;
  // One all-reduce of `count` elements; blocks until it has completed on this
  // rank and returns its duration in microseconds.
  virtual double RunOnce(int64_t count, bool in_place) = 0;
  // `iters` untimed calls, then waits for them.
  virtual void Warmup(int64_t count, bool in_place, int iters) {
    for (int i = 0; i < iters; ++i) RunOnce(count, in_place);
  }
  // The timed iterations of one size (timing_plan.h). A backend whose calls
  // block times them one by one (no mean_us: the samples' mean is the
  // time); the NCCL backend times nccl-tests' back-to-back loop for the mean
  // and a second loop for the per-call samples.
  struct TimedRun {
    std::vector<double> samples_us;  // one per call, or per graph launch
    std::optional<double> mean_us;   // nccl-tests' time per call, when measured apart
  };
  virtual TimedRun RunTimed(int64_t count, bool in_place, int iters) {
    TimedRun run;
    run.samples_us.resize(static_cast<size_t>(std::max(iters, 0)));
    for (double& s : run.samples_us) s = RunOnce(count, in_place);
    return run;
  }
  // Output elements that differ from the expected reduction of the pattern.
  virtual int64_t CountWrong(int64_t count, bool in_place) = 0;
  virtual BackendInfo Info() const = 0;
  // Step mode (step_plan.h): warmup and measured steps on every rank
  // (collective); rank 0 gets one sample per measured step, each figure the
  // slowest rank's, the others an empty vector.
  virtual std::vector<StepSample> RunSteps(const StepOptions& options, int rank, int ranks) = 0;
  // This rank's NCCL_DEBUG output so far (the NCCL backend sends it to a
  // private per-rank file unless NCCL_DEBUG_FILE is set); "" when none.
  // Read at call time: call it after the sweep to get the whole log.
  virtual std::string DebugLog() { return ""; }
};

struct RankPlacement {
  int rank = 0;
  int ranks = 1;
  int local_rank = 0;  // index among the ranks on the same host
};

std::unique_ptr<AllReduceBackend> MakeMpiBackend(const HarnessOptions& options,
                                                 const RankPlacement& placement);
// nullptr (and a message in *why) when built without CUDA/NCCL.
std::unique_ptr<AllReduceBackend> MakeNcclBackend(const HarnessOptions& options,
                                                  const RankPlacement& placement, std::string* why);
bool NcclBackendCompiled();

}  // namespace fabtrack::harness
