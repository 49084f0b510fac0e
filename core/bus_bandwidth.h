// The one table of bus-bandwidth factors, the same as nccl-tests uses
// (busbw = algbw * factor(n)). Used by the harness when it reports and by the
// analyzer when it needs busbw for data that only carries algbw; parsed
// outputs are stored as printed and never recomputed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// Canonical collective name from an nccl-tests program or test name:
// "all_reduce_perf", "all_gather_perf_mpi", "AllReduce" -> "all_reduce".
// Returns nullopt for names it does not know.
std::optional<std::string> CanonicalCollective(std::string_view name);

// Every collective nccl-tests has a program for (`<name>_perf`), sorted.
std::vector<std::string> KnownCollectives();

// Bus-bandwidth factor for `ranks` ranks; nullopt for unknown collectives.
std::optional<double> BusBandwidthFactor(std::string_view collective, int ranks);

}  // namespace fabtrack
