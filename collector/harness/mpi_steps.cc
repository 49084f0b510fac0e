#include "collector/harness/mpi_steps.h"

#include <mpi.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace fabtrack::harness {
namespace {

// A stand-in for GPU compute on the CPU: floating-point work until the
// deadline, driving the outstanding reductions every few microseconds (Open
// MPI's TCP transport progresses only inside MPI calls; NCCL needs no such
// help because the GPU runs it). Time-based, so it needs no calibration and
// stays right when the reductions steal CPU: the backward pass ends on time.
void ComputeUntil(double deadline, std::vector<MPI_Request>& requests) {
  volatile double sink = 1.0;
  while (MPI_Wtime() < deadline) {
    double x = sink;
    for (int i = 0; i < 256; ++i) x = x * 1.0000001 + 1e-9;
    sink = x;
    // Completed requests become MPI_REQUEST_NULL in place, which later
    // waits skip: the array must be the one the requests live in.
    int done = 0;
    MPI_Testall(static_cast<int>(requests.size()), requests.data(), &done, MPI_STATUSES_IGNORE);
  }
}

// MPI has no 16-bit floating-point type: 16-bit gradients travel as int16
// sums, which move the same bytes with the same reduction work per element.
MPI_Datatype WireType(const std::string& dtype) {
  return dtype == "fp32" ? MPI_FLOAT : MPI_INT16_T;
}

struct RankStep {
  double step_ms, compute_ms, exposed_ms;
};

RankStep OneStep(const StepOptions& o, const std::vector<Bucket>& buckets,
                 std::vector<std::vector<char>>& pool, MPI_Datatype type, int width) {
  std::vector<MPI_Request> slot_request(pool.size(), MPI_REQUEST_NULL);
  MPI_Barrier(MPI_COMM_WORLD);
  const double start = MPI_Wtime();
  ComputeUntil(start + o.forward_ms / 1e3, slot_request);
  const double backward = MPI_Wtime();
  size_t next_slot = 0;
  for (const Bucket& b : buckets) {
    ComputeUntil(backward + b.ready_ms / 1e3, slot_request);
    // Host memory bounds the buckets in flight: reuse the oldest slot once
    // its reduction is done (DDP keeps every bucket; a wait here shows up as
    // a longer backward pass, i.e. as compute, never hidden).
    MPI_Wait(&slot_request[next_slot], MPI_STATUS_IGNORE);
    std::vector<char>& buffer = pool[next_slot];
    MPI_Iallreduce(MPI_IN_PLACE, buffer.data(), static_cast<int>(b.bytes / width), type, MPI_SUM,
                   MPI_COMM_WORLD, &slot_request[next_slot]);
    next_slot = (next_slot + 1) % pool.size();
  }
  const double backward_end = MPI_Wtime();
  MPI_Waitall(static_cast<int>(slot_request.size()), slot_request.data(), MPI_STATUSES_IGNORE);
  const double end = MPI_Wtime();
  return {(end - start) * 1e3, (backward_end - start) * 1e3, (end - backward_end) * 1e3};
}

}  // namespace

std::vector<StepSample> RunMpiSteps(const StepOptions& o, int rank, int ranks) {
  const std::vector<Bucket> buckets = PlanBuckets(o);
  const int width = GradientElementSize(o.grad_dtype);
  const MPI_Datatype type = WireType(o.grad_dtype);
  int64_t largest = 0;
  for (const Bucket& b : buckets) largest = std::max(largest, b.bytes);
  const size_t slots =
      std::min(buckets.size(), static_cast<size_t>(std::max(1, o.max_buckets_in_flight)));
  std::vector<std::vector<char>> pool(slots, std::vector<char>(static_cast<size_t>(largest), 1));

  for (int w = 0; w < o.warmup_steps; ++w) OneStep(o, buckets, pool, type, width);
  std::vector<double> mine;
  for (int s = 0; s < o.steps; ++s) {
    RankStep r = OneStep(o, buckets, pool, type, width);
    mine.insert(mine.end(), {r.step_ms, r.compute_ms, r.exposed_ms});
  }
  return SlowestPerStep(mine, o.steps, rank, ranks);
}

std::vector<StepSample> SlowestPerStep(const std::vector<double>& mine, int steps, int rank,
                                       int ranks) {
  std::vector<double> all(rank == 0 ? mine.size() * static_cast<size_t>(ranks) : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<StepSample> samples;
  if (rank != 0) return samples;
  for (int s = 0; s < steps; ++s) {
    StepSample x;
    x.step = s;
    for (int r = 0; r < ranks; ++r) {
      const double* at = &all[(static_cast<size_t>(r) * steps + s) * 3];
      x.step_ms = std::max(x.step_ms, at[0]);
      x.compute_ms = std::max(x.compute_ms, at[1]);
      x.exposed_ms = std::max(x.exposed_ms, at[2]);
    }
    samples.push_back(x);
  }
  return samples;
}

}  // namespace fabtrack::harness
