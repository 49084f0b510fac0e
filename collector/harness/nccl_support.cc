#include "collector/harness/nccl_support.h"

#include <cmath>
#include <cstdio>
#include <stdexcept>

namespace fabtrack::harness {

NcclTypeCode ToNcclTypeCode(DataType t) {
  switch (t) {
    case DataType::kInt8:
      return NcclTypeCode::kInt8;
    case DataType::kUint8:
      return NcclTypeCode::kUint8;
    case DataType::kInt32:
      return NcclTypeCode::kInt32;
    case DataType::kUint32:
      return NcclTypeCode::kUint32;
    case DataType::kInt64:
      return NcclTypeCode::kInt64;
    case DataType::kUint64:
      return NcclTypeCode::kUint64;
    case DataType::kHalf:
      return NcclTypeCode::kFloat16;
    case DataType::kBfloat16:
      return NcclTypeCode::kBfloat16;
    case DataType::kFloat:
      return NcclTypeCode::kFloat32;
    case DataType::kDouble:
      return NcclTypeCode::kFloat64;
  }
  throw std::invalid_argument("NCCL backend: unknown data type");
}

NcclOpCode ToNcclOpCode(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return NcclOpCode::kSum;
    case ReduceOp::kProd:
      return NcclOpCode::kProd;
    case ReduceOp::kMax:
      return NcclOpCode::kMax;
    case ReduceOp::kMin:
      return NcclOpCode::kMin;
    case ReduceOp::kAvg:
      return NcclOpCode::kAvg;
  }
  throw std::invalid_argument("NCCL backend: unknown reduction");
}

std::string FormatNcclVersion(int code) {
  int major, minor, patch;
  if (code >= 20900) {
    major = code / 10000;
    minor = (code % 10000) / 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
  }
  patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

std::string FormatCudaVersion(int code) {
  return std::to_string(code / 1000) + "." + std::to_string((code % 1000) / 10);
}

std::string FormatBusId(int domain, int bus, int device) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%04x:%02x:%02x", static_cast<unsigned>(domain),
                static_cast<unsigned>(bus), static_cast<unsigned>(device));
  return buf;
}

bool ValueMatches(double got, double expected, bool tolerant) {
  if (got == expected) return true;
  if (!tolerant || std::isnan(got)) return false;
  return std::fabs(got - expected) <= 1e-2 * std::fabs(expected);
}

std::string DebugTempBase(const EnvLookup& env) {
  auto tmp = env("TMPDIR");
  if (tmp && !tmp->empty() && tmp->find('%') == std::string::npos) return *tmp;
  return "/tmp";
}

std::vector<std::pair<std::string, std::string>> NcclDebugSettings(const EnvLookup& env,
                                                                   const std::string& dir,
                                                                   int rank) {
  std::vector<std::pair<std::string, std::string>> settings;
  if (env("NCCL_DEBUG_FILE")) return settings;
  if (!env("NCCL_DEBUG")) settings.emplace_back("NCCL_DEBUG", "INFO");
  if (!env("NCCL_DEBUG_SUBSYS")) settings.emplace_back("NCCL_DEBUG_SUBSYS", "INIT,NET");
  settings.emplace_back("NCCL_DEBUG_FILE",
                        dir + "/nccl-debug-rank" + std::to_string(rank) + ".log");
  return settings;
}

}  // namespace fabtrack::harness
