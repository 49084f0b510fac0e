#include "core/bus_bandwidth.h"

#include <algorithm>
#include <cctype>
#include <map>

namespace fabtrack {
namespace {

// How each nccl-tests collective scales algbw to busbw (src/<coll>.cu GetBw).
enum class Scaling { kAllReduce, kNMinus1OverN, kOne };

const std::map<std::string, Scaling, std::less<>>& Table() {
  static const auto* table = new std::map<std::string, Scaling, std::less<>>{
      {"all_reduce", Scaling::kAllReduce},
      {"all_gather", Scaling::kNMinus1OverN},
      {"reduce_scatter", Scaling::kNMinus1OverN},
      {"alltoall", Scaling::kNMinus1OverN},
      {"gather", Scaling::kNMinus1OverN},
      {"scatter", Scaling::kNMinus1OverN},
      {"alltoallv", Scaling::kNMinus1OverN},
      // hypercube's algbw already counts the n-1 peers each rank sends to.
      {"hypercube", Scaling::kOne},
      {"broadcast", Scaling::kOne},
      {"reduce", Scaling::kOne},
      {"sendrecv", Scaling::kOne},
  };
  return *table;
}

}  // namespace

std::optional<std::string> CanonicalCollective(std::string_view name) {
  // fabtrack's own harness names itself "fabtrack-allreduce".
  if (name.starts_with("fabtrack-")) name.remove_prefix(9);
  std::string s;
  // Insert '_' at CamelCase boundaries ("AllReduce" -> "all_reduce").
  for (size_t i = 0; i < name.size(); ++i) {
    char c = name[i];
    if (std::isupper(static_cast<unsigned char>(c)) && i > 0 && s.back() != '_') s += '_';
    s += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (std::string_view suffix : {"_mpi", "_perf"}) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) s.resize(s.size() - suffix.size());
  }
  if (s == "allreduce") s = "all_reduce";
  if (s == "allgather") s = "all_gather";
  if (s == "reducescatter") s = "reduce_scatter";
  if (s == "all_to_all" || s == "all2all") s = "alltoall";
  if (s == "send_recv") s = "sendrecv";
  if (Table().count(s) == 0) return std::nullopt;
  return s;
}

std::vector<std::string> KnownCollectives() {
  std::vector<std::string> names;
  for (const auto& [name, scaling] : Table()) names.push_back(name);
  return names;
}

std::optional<double> BusBandwidthFactor(std::string_view collective, int ranks) {
  auto it = Table().find(collective);
  if (it == Table().end() || ranks <= 0) return std::nullopt;
  double n = ranks;
  switch (it->second) {
    case Scaling::kAllReduce:
      return 2.0 * (n - 1) / n;
    case Scaling::kNMinus1OverN:
      return (n - 1) / n;
    case Scaling::kOne:
      return 1.0;
  }
  return std::nullopt;
}

}  // namespace fabtrack
