#include "collector/parse/nccl_vocabulary.h"

#include <algorithm>
#include <array>

namespace fabtrack {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

template <size_t N>
bool OneOf(std::string_view word, const std::array<std::string_view, N>& list) {
  return std::find(list.begin(), list.end(), word) != list.end();
}

// "IBext_v8" -> "IBext"; names without a version suffix stay whole.
std::string_view WithoutPluginVersion(std::string_view name) {
  size_t pos = name.rfind("_v");
  if (pos == std::string_view::npos || pos + 2 == name.size()) return name;
  std::string_view digits = name.substr(pos + 2);
  if (!std::all_of(digits.begin(), digits.end(), IsDigit)) return name;
  return name.substr(0, pos);
}

}  // namespace

bool IsKnownNetName(std::string_view name) {
  // NCCL's own (IB, Socket), nccl-rdma-sharp-plugins (IBext, UCX, UCX-RMA,
  // UCX-UCT), aws-ofi-nccl (AWS Libfabric, Libfabric), Google's gIB,
  // GPUDirect-TCPX and FasTrak plugins.
  static constexpr std::array<std::string_view, 11> kNames = {
      "IB",        "Socket", "IBext",         "UCX",     "UCX-RMA",      "UCX-UCT",
      "Libfabric", "gIB",    "GPUDirectTCPX", "FasTrak", "AWS Libfabric"};
  return OneOf(WithoutPluginVersion(name), kNames);
}

bool IsKnownCollNetName(std::string_view name) {
  static constexpr std::array<std::string_view, 1> kNames = {"SHARP"};
  return OneOf(WithoutPluginVersion(name), kNames);
}

bool IsKnownNetFlag(std::string_view flag) {
  if (flag == "GDRDMA" || flag == "Shared") return true;
  // 2.28 names the GDR path: "GDRDMA(PCI)".
  return flag.size() > 8 && flag.substr(0, 7) == "GDRDMA(" && flag.back() == ')';
}

bool IsKnownP2pKind(std::string_view kind) {
  static constexpr std::array<std::string_view, 6> kKinds = {
      "IPC", "CUMEM", "MNNVL", "direct pointer", "common device", "indirect"};
  return OneOf(kind, kKinds);
}

bool IsKnownP2pFlag(std::string_view flag) { return flag == "read" || flag == "CE"; }

bool IsKnownShmMode(std::string_view mode) { return mode == "direct" || mode == "CE"; }

bool IsDottedVersion(std::string_view text) {
  if (text.empty() || !IsDigit(text.front()) || !IsDigit(text.back())) return false;
  bool dot = false;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '.') {
      if (text[i - 1] == '.') return false;
      dot = true;
    } else if (!IsDigit(text[i])) {
      return false;
    }
  }
  return dot;
}

}  // namespace fabtrack
