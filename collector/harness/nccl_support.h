// The pure parts of the NCCL backend: data-type and reduction codes, version
// and PCI-id spelling, value comparison and the NCCL_DEBUG capture settings.
// No CUDA or NCCL header here, so these are unit-tested on any machine;
// nccl_backend.cc checks at compile time that the codes match nccl.h.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collector/harness/harness_options.h"

namespace fabtrack::harness {

// The numeric values of ncclDataType_t and ncclRedOp_t (nccl.h, 2.x).
enum class NcclTypeCode : int {
  kInt8 = 0,
  kUint8 = 1,
  kInt32 = 2,
  kUint32 = 3,
  kInt64 = 4,
  kUint64 = 5,
  kFloat16 = 6,
  kFloat32 = 7,
  kFloat64 = 8,
  kBfloat16 = 9,
};
enum class NcclOpCode : int { kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4 };

NcclTypeCode ToNcclTypeCode(DataType t);
NcclOpCode ToNcclOpCode(ReduceOp op);

// ncclGetVersion's code as "2.28.9": MAJOR*10000 + MINOR*100 + PATCH since
// 2.9, MAJOR*1000 + MINOR*100 + PATCH before.
std::string FormatNcclVersion(int code);
// cudaRuntimeGetVersion / cudaDriverGetVersion's code (13000) as "13.0".
std::string FormatCudaVersion(int code);
// cudaDeviceProp's PCI location as nccl-tests prints it: "0000:1b:00".
std::string FormatBusId(int domain, int bus, int device);

// Whether a reduced element equals the expected one. Exact, except for
// floating-point averages (NCCL scales each input by 1/ranks before summing),
// which may differ by 1e-2 relative.
bool ValueMatches(double got, double expected, bool tolerant);
inline bool NeedsTolerance(DataType t, ReduceOp op) {
  return op == ReduceOp::kAvg && (t == DataType::kHalf || t == DataType::kBfloat16 ||
                                  t == DataType::kFloat || t == DataType::kDouble);
}

// Where a rank's private NCCL debug directory is created: $TMPDIR unless it
// is unset, empty or holds a '%' (NCCL expands %h and %p in
// NCCL_DEBUG_FILE), else /tmp.
using EnvLookup = std::function<std::optional<std::string>(const std::string&)>;
std::string DebugTempBase(const EnvLookup& env);

// The variables to set before NCCL's first call so that this rank's
// NCCL_DEBUG=INFO output lands in `dir`/nccl-debug-rank<rank>.log. Empty when
// NCCL_DEBUG_FILE is already set (the user chose where the log goes);
// NCCL_DEBUG and NCCL_DEBUG_SUBSYS are only set when unset.
std::vector<std::pair<std::string, std::string>> NcclDebugSettings(const EnvLookup& env,
                                                                   const std::string& dir,
                                                                   int rank);

}  // namespace fabtrack::harness
