// Step mode of fabtrack-allreduce: a data-parallel training step as DDP runs
// it. The backward pass produces gradients bucket by bucket (DDP fills
// buckets in reverse parameter order, 25 MiB each by default,
// torch.nn.parallel.DistributedDataParallel's bucket_cap_mb); each bucket's
// all-reduce starts as soon as it is full and overlaps the rest of the
// backward pass; the optimizer step waits for the last one. What the network
// costs is the part of communication not hidden behind compute: the
// "exposed" time, when the GPUs sit idle. Pure pieces, unit-tested.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/run_record.h"

namespace fabtrack::harness {

struct StepOptions {
  int64_t model_params = 0;
  std::string grad_dtype = "bf16";  // fp32 | bf16 | fp16
  int64_t bucket_bytes = 25 << 20;  // DDP's bucket_cap_mb = 25
  double forward_ms = 0;            // not overlapped with communication
  double backward_ms = 0;           // gradients appear over this time
  int steps = 20;
  int warmup_steps = 3;
  int max_buckets_in_flight = 16;  // host memory bound of the MPI backend
};

// "7B", "1.3B", "350M", "125000000", "70e9" (decimal suffixes K M B T, as
// model sizes are quoted). nullopt when malformed, not positive or above 1e15.
std::optional<int64_t> ParseParameterCount(const std::string& text);
// 4 for fp32, 2 for bf16/fp16; 0 for anything else.
int GradientElementSize(const std::string& dtype);

struct Bucket {
  int64_t bytes = 0;
  double ready_ms = 0;  // after the start of the backward pass
};

// The buckets of one step: the gradient volume cut into bucket_bytes pieces
// (the last one smaller), each ready when the backward pass has produced its
// share of the gradients (gradients appear at a steady rate). Each bucket is
// a whole number of elements.
std::vector<Bucket> PlanBuckets(const StepOptions& options);

// "" when valid, else a message naming the flag.
std::string ValidateStep(const StepOptions& options);

// Percentiles and means over the measured steps (warmup excluded by the
// caller).
StepSummary SummarizeSteps(const StepOptions& options, const std::vector<StepSample>& samples);

}  // namespace fabtrack::harness
