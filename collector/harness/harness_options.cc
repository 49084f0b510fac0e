#include "collector/harness/harness_options.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <limits>

namespace fabtrack::harness {
namespace {

struct TypeInfo {
  DataType type;
  const char* name;
  int size;
  std::vector<const char*> aliases;
};

const std::vector<TypeInfo>& Types() {
  static const auto* types = new std::vector<TypeInfo>{
      {DataType::kInt8, "int8", 1, {"char"}},      {DataType::kUint8, "uint8", 1, {}},
      {DataType::kInt32, "int32", 4, {"int"}},     {DataType::kUint32, "uint32", 4, {}},
      {DataType::kInt64, "int64", 8, {}},          {DataType::kUint64, "uint64", 8, {}},
      {DataType::kHalf, "half", 2, {"float16"}},   {DataType::kBfloat16, "bfloat16", 2, {}},
      {DataType::kFloat, "float", 4, {"float32"}}, {DataType::kDouble, "double", 8, {"float64"}},
  };
  return *types;
}

// Most bytes one sweep may ask for per buffer (several buffers are allocated).
constexpr int64_t kMaxBytes = int64_t{1} << 40;

}  // namespace

std::optional<int64_t> ParseSize(const std::string& text) {
  if (text.empty()) return std::nullopt;
  int64_t value = 0;
  const char* begin = text.data();
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(begin, end, value);
  if (ec != std::errc() || p == begin || value < 0) return std::nullopt;
  int64_t scale = 1;
  if (p != end) {
    if (p + 1 != end) return std::nullopt;
    switch (std::toupper(static_cast<unsigned char>(*p))) {
      case 'K':
        scale = int64_t{1} << 10;
        break;
      case 'M':
        scale = int64_t{1} << 20;
        break;
      case 'G':
        scale = int64_t{1} << 30;
        break;
      case 'T':
        scale = int64_t{1} << 40;
        break;
      default:
        return std::nullopt;
    }
  }
  if (value > std::numeric_limits<int64_t>::max() / scale) return std::nullopt;
  return value * scale;
}

const char* DataTypeName(DataType t) {
  for (const auto& info : Types()) {
    if (info.type == t) return info.name;
  }
  return "?";
}

int DataTypeSize(DataType t) {
  for (const auto& info : Types()) {
    if (info.type == t) return info.size;
  }
  return 1;
}

std::optional<DataType> ParseDataType(const std::string& name) {
  for (const auto& info : Types()) {
    if (name == info.name) return info.type;
    for (const char* alias : info.aliases) {
      if (name == alias) return info.type;
    }
  }
  return std::nullopt;
}

const char* ReduceOpName(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return "sum";
    case ReduceOp::kProd:
      return "prod";
    case ReduceOp::kMax:
      return "max";
    case ReduceOp::kMin:
      return "min";
    case ReduceOp::kAvg:
      return "avg";
  }
  return "?";
}

std::optional<ReduceOp> ParseReduceOp(const std::string& name) {
  for (ReduceOp op :
       {ReduceOp::kSum, ReduceOp::kProd, ReduceOp::kMax, ReduceOp::kMin, ReduceOp::kAvg}) {
    if (name == ReduceOpName(op)) return op;
  }
  return std::nullopt;
}

std::vector<int64_t> SweepSizes(const HarnessOptions& o) {
  std::vector<int64_t> sizes;
  const int64_t width = DataTypeSize(o.dtype);
  for (int64_t size = o.min_bytes; size <= o.max_bytes;) {
    int64_t rounded = std::max<int64_t>(size / width, 1) * width;
    if (sizes.empty() || sizes.back() != rounded) sizes.push_back(rounded);
    int64_t next = o.step_is_factor ? size * o.step_factor : size + o.step_bytes;
    if (next <= size) break;  // factor 1 or step 0 would loop forever: Validate() refuses them
    size = next;
  }
  return sizes;
}

double CombineRankTimes(const std::vector<double>& rank_means_us, RankTimeMode mode) {
  switch (mode) {
    case RankTimeMode::kRank0:
      return rank_means_us.front();
    case RankTimeMode::kMin:
      return *std::min_element(rank_means_us.begin(), rank_means_us.end());
    case RankTimeMode::kMax:
      return *std::max_element(rank_means_us.begin(), rank_means_us.end());
    case RankTimeMode::kAverage:
      break;
  }
  double sum = 0;
  for (double v : rank_means_us) sum += v;
  return sum / static_cast<double>(rank_means_us.size());
}

std::string Validate(const HarnessOptions& o, bool backend_has_nccl) {
  if (o.backend != "mpi" && o.backend != "nccl") {
    return "--backend " + o.backend + ": expected mpi or nccl";
  }
  if (o.backend == "nccl" && !backend_has_nccl) {
    return "--backend nccl: this fabtrack-allreduce was built without CUDA/NCCL; use --backend mpi";
  }
  if (o.min_bytes < 0 || o.max_bytes < 0) return "-b/-e: sizes must not be negative";
  if (o.max_bytes < o.min_bytes) {
    return "-e " + std::to_string(o.max_bytes) + " is smaller than -b " +
           std::to_string(o.min_bytes);
  }
  if (o.max_bytes > kMaxBytes) return "-e: more than 1 TiB per buffer";
  if (o.step_is_factor && o.step_factor < 2 && o.max_bytes > o.min_bytes) {
    return "-f " + std::to_string(o.step_factor) + ": the step factor must be at least 2";
  }
  if (!o.step_is_factor && o.step_bytes <= 0 && o.max_bytes > o.min_bytes) {
    return "-i " + std::to_string(o.step_bytes) + ": the step must be positive";
  }
  if (!o.step_is_factor && o.step_bytes > 0 &&
      (o.max_bytes - o.min_bytes) / o.step_bytes > 100000) {
    return "-i: more than 100000 sizes in one sweep";
  }
  if (o.iters < 1) return "-n " + std::to_string(o.iters) + ": need at least one iteration";
  if (o.iters > 10000000) return "-n: at most 10000000 iterations";
  if (o.warmup_iters < 0) return "-w: warmup iterations must not be negative";
  if (o.timing.graph_launches < 0) return "-G: graph launches must not be negative";
  if (o.timing.graph_launches > kMaxEventsPerChunk * 1000) return "-G: at most 1024000 launches";
  if (o.backend == "mpi" && o.timing.graph_launches > 0) {
    return "-G " + std::to_string(o.timing.graph_launches) +
           ": CUDA graphs need the nccl backend (MPI calls are timed one by one)";
  }
  if (o.backend == "mpi" && (o.dtype == DataType::kHalf || o.dtype == DataType::kBfloat16)) {
    return std::string("-d ") + DataTypeName(o.dtype) +
           ": MPI has no such type; use the nccl "
           "backend or float";
  }
  if (o.backend == "mpi" && o.op == ReduceOp::kAvg) {
    return "-o avg: MPI_Allreduce has no average; use sum";
  }
  if (o.threads != 1 || o.gpus_per_thread != 1) {
    return std::string(o.threads != 1 ? "-t " + std::to_string(o.threads)
                                      : "-g " + std::to_string(o.gpus_per_thread)) +
           ": fabtrack-allreduce drives one device per rank; start one rank per GPU "
           "(mpirun -np N, fabtrack sweep --ranks-per-node N), or sweep nccl-tests itself "
           "(fabtrack sweep --bench nccl-tests)";
  }
  if (o.cycles < 1) {
    return "-N " + std::to_string(o.cycles) +
           ": at least one cycle (nccl-tests' -N 0 runs forever; a run is stored when it ends)";
  }
  if (o.cycles > 1000) return "-N: at most 1000 cycles";
  if (o.cluster && o.cluster->empty()) return "--cluster: empty name";
  return "";
}

}  // namespace fabtrack::harness
