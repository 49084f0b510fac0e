// How many nodes a run spanned, from the strongest evidence a parsed file
// holds: NCCL's own words first, host names last.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "core/model.h"

namespace fabtrack {

struct NodeCount {
  std::optional<int> nodes;
  std::optional<int> ranks_per_node;  // NCCL's localRanks, when printed
  // Where `nodes` came from: "--nodes", "nccl nNodes", "nccl init lines",
  // "nccl-tests rank lines", "hostnames", "channels (at least)"; empty when
  // nothing tells.
  std::string source;
};

// In order: `override` (--nodes); NCCL's nNodes of the largest communicator;
// the hosts of init lines naming every rank of it; the hosts of nccl-tests'
// "#  Rank" lines; the hosts of NCCL's line prefixes; and, when those show
// fewer than two, a channel "via NET/..." means a peer on another node, so at
// least 2 (not when the log or the environment disabled both P2P and SHM,
// which sends single-node traffic through the network too). `table` may be
// null (a log without a result table). Pure.
NodeCount DecideNodeCount(const TestTable* table, const NcclLogInfo& log,
                          const std::map<std::string, std::string>& env,
                          std::optional<int> override);

}  // namespace fabtrack
