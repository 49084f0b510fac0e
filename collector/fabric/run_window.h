// A run's share of two subnet scans (`sweep --fabric-scan`): which of the
// subnet's HCAs are the run's hosts, by their node descriptions (what
// ibnetdiscover prints: "node12 HCA-1", "node12 mlx5_0", a bare "node12"),
// the leaf switches those HCAs hang on, and the cables of those leaves (to
// the hosts and the uplinks to the spines), both ends, in each scan. Pure.
#pragma once

#include <string>
#include <vector>

#include "core/fabric_scan.h"
#include "core/run_fabric_window.h"

namespace fabtrack::fabric {

// The host a CA's node description names: its first word, or "" for an
// empty description.
std::string DescribedHost(const std::string& description);

// Whether a run's host name and a described host are the same machine: equal,
// or equal short names (before the first '.') where one side is short.
bool SameHost(const std::string& run_host, const std::string& described_host);

// The window of a run on `hosts` between two scans. The hosts are mapped on
// both scans' CAs; the leaves are the switches cabled to a mapped HCA in
// either scan; each scan keeps the leaves' cables, the nodes at their ends,
// the leaves' ports and both ends' ports, and what of those did not answer.
RunFabricWindow CutRunFabricWindow(const FabricScan& before, const FabricScan& after,
                                   const std::vector<std::string>& hosts);

// What a leaf's uplinks counted at the scan, one line per switch-to-switch
// cable of the switch described `leaf`: "leaf01/5 <-> spine01/1:
// symbol_error 17 at leaf01/5", or "...: no error or wait counted".
// `locate --topology SCAN` prints them beside an uplink suspect. Empty when
// no switch is described so.
std::vector<std::string> UplinkCounterLines(const FabricScan& scan, const std::string& leaf);

}  // namespace fabtrack::fabric
