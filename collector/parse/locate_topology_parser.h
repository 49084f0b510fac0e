// locate's topology (issue 20): which leaf switch each node hangs off and
// which spine each leaf's uplink goes to, read from one of two texts. Pure.
//
// 1. fabtrack's topology file, one switch per line:
//      # comment (also after a line's content)
//      leaf1: node1 node2 node3     <- a switch and the nodes on it: a leaf
//      leaf2: node4 node5
//      spine: leaf1 leaf2           <- a switch whose members are switches: a spine
//    Names are any run of non-blank characters but ':' and '#'. A node sits
//    under one leaf, a leaf under one spine; a spine under a spine (three
//    tiers) is refused. A leaf under no spine has no uplink to suspect.
//    scripts/netns-fabric.sh topology prints this format.
//
// 2. `ibnetdiscover` output (infiniband-diags; format as in its man page
//    and real captures): blocks of "vendid=/devid=/sysimgguid=/switchguid="
//    or "caguid=" lines, then
//      Switch  <ports> "S-<guid>"  # "<description>" <base|enhanced> port 0 lid L lmc 0
//      [port]  "H-<guid>"[peer port](portguid)  # "<peer description>" lid L 4xHDR
//      Ca      <ports> "H-<guid>"  # "<description>"
//      [port](portguid)  "S-<guid>"[peer port]  # lid L lmc 0 "<switch description>" lid L 4xHDR
//    A switch with a CA on one of its ports is a leaf; a switch linked to a
//    leaf that has no CA is a spine (the first, by name, when a leaf has
//    several: its uplink stands for all of them). A node is named by the
//    first word of its CA's description ("gpu-a01 mlx5_0" -> gpu-a01; a host
//    with several HCAs is placed by the first one listed). A switch is named
//    by its description's host part for managed switches ("MF0;leaf01:
//    MQM8700/U1" -> leaf01), else its description when no other switch
//    shares it, else "S-<guid>".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/fabric_scan.h"
#include "core/locate.h"

namespace fabtrack {

struct ParsedTopology {
  LocateTopology topology;
  std::vector<std::string> errors;  // "file:line: what"; the topology is unusable when any
};

ParsedTopology ParseLocateTopologyFile(std::string_view text, const std::string& file);
ParsedTopology ParseIbnetdiscover(std::string_view text, const std::string& file);

// True when `text` looks like ibnetdiscover output (a "switchguid=" or
// "caguid=" line, or a "Switch N \"S-" / "Ca N \"H-" node line).
bool LooksLikeIbnetdiscover(std::string_view text);

// 3. A subnet scan (`fabtrack fabric scan --format json`): its nodes and
//    cables, placed by the same rules as ibnetdiscover's.
ParsedTopology ParseFabricScanTopology(const FabricScan& scan, const std::string& file);

// Any of the three, sniffed (a scan is a JSON object).
ParsedTopology ParseTopology(std::string_view text, const std::string& file);

// The same fabric in fabtrack's topology-file format (leaves in order of
// their first node, then spines).
std::string FormatLocateTopology(const LocateTopology& topology);

}  // namespace fabtrack
