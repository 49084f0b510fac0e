// fabtrack-allreduce's settings, in nccl-tests' vocabulary (-b -e -i -f -n -w
// -c -d -o -z -G -a -N, and -g/-t at 1), parsed and validated before any rank
// does work. Pure.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collector/harness/step_plan.h"
#include "collector/harness/timing_plan.h"

namespace fabtrack::harness {

enum class DataType {
  kInt8,
  kUint8,
  kInt32,
  kUint32,
  kInt64,
  kUint64,
  kHalf,
  kBfloat16,
  kFloat,
  kDouble
};
enum class ReduceOp { kSum, kProd, kMax, kMin, kAvg };
// nccl-tests -a 0..3: rank 0's time, the average (default), min or max.
enum class RankTimeMode { kRank0 = 0, kAverage = 1, kMin = 2, kMax = 3 };

// The reported time of one size from every rank's mean, as nccl-tests -a
// combines them. `rank_means_us` in rank order, not empty.
double CombineRankTimes(const std::vector<double>& rank_means_us, RankTimeMode mode);

struct HarnessOptions {
  std::string backend = "mpi";  // "mpi" | "nccl"
  int64_t min_bytes = 32 * 1024 * 1024;
  int64_t max_bytes = 32 * 1024 * 1024;
  int64_t step_bytes = 1024 * 1024;  // used when step_factor == 1... see Sizes()
  int64_t step_factor = 1;           // >1: geometric sweep (nccl-tests -f)
  bool step_is_factor = false;
  int iters = 20;
  int warmup_iters = 5;
  bool check = true;
  // nccl-tests -a: how the ranks' mean times make the reported time.
  RankTimeMode rank_time = RankTimeMode::kAverage;
  int cycles = 1;  // nccl-tests -N: the sweep run and printed this many times
  // nccl-tests -t/-g: one process drives threads x GPUs. fabtrack-allreduce
  // drives one device per rank (launch one rank per GPU): both must be 1.
  int threads = 1, gpus_per_thread = 1;
  TimingOptions timing;  // -z, -G: how the NCCL backend times its calls (timing_plan.h)
  DataType dtype = DataType::kFloat;
  ReduceOp op = ReduceOp::kSum;
  // Where results go.
  std::optional<std::string> cluster;  // store into the database when set
  std::optional<std::string> db;       // conninfo (else FABTRACK_DB, PG*, embedded)
  std::optional<std::string> output;   // JSON result file
  std::map<std::string, std::string> tags;
  std::optional<std::string> sweep_id;  // groups the runs of one `fabtrack sweep`
  // Where the node facts (HCA firmware, link rates) are read: each rank's
  // node's sysfs root; "{host}" in it becomes that node's host name.
  std::string sysfs = "/sys";
  bool quiet = false;
  int64_t link_probe_bytes = 1 << 20;  // point-to-point probe between nodes; 0: off
  std::optional<StepOptions> step;     // step mode (--step) instead of a size sweep
};

// "8", "1K", "64M", "2G" (powers of 1024, as nccl-tests). nullopt if malformed
// or out of range.
std::optional<int64_t> ParseSize(const std::string& text);

const char* DataTypeName(DataType t);  // nccl-tests spelling: "float", "half", "bfloat16", ...
int DataTypeSize(DataType t);
std::optional<DataType> ParseDataType(const std::string& name);
const char* ReduceOpName(ReduceOp op);  // "sum", "prod", "max", "min", "avg"
std::optional<ReduceOp> ParseReduceOp(const std::string& name);

// The message sizes of the sweep in bytes, each rounded down to a whole
// number of elements (and at least one element), like nccl-tests.
std::vector<int64_t> SweepSizes(const HarnessOptions& options);

// Empty when valid, else a message naming the flag, e.g.
// "-e 4K is smaller than -b 8K". `backend_has_nccl` tells whether the NCCL
// backend was compiled in.
std::string Validate(const HarnessOptions& options, bool backend_has_nccl);

}  // namespace fabtrack::harness
