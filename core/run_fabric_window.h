// The switch side of one run's window (`sweep --fabric-scan`): the subnet
// scanned just before and just after the run, cut down to the cables of the
// leaves the run's nodes hang on (their HCA cables and the leaves' uplinks,
// both ends), and which of the run's hosts were found among the subnet's HCAs
// (by node description: "node12 HCA-1", "node12 mlx5_0") and which were not.
// Plain data with its one serializer; stored linked to the run (schema 021),
// judged by the analyzer like two stored scans.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/fabric_scan.h"
#include "core/json_instances.h"

namespace fabtrack {

struct RunFabricWindow {
  // The two scans, each holding only the window's nodes, ports and cables.
  FabricScan before, after;
  // Run host -> its HCA's node GUID(s) (a host with two HCAs has two).
  std::map<std::string, std::vector<std::string>> hosts;
  // The run's hosts no HCA's node description names.
  std::vector<std::string> unmapped_hosts;
  // The leaf switches the mapped HCAs hang on (node descriptions).
  std::vector<std::string> leaves;

  friend bool operator==(const RunFabricWindow&, const RunFabricWindow&) = default;
};

// One cable's counter growth over the window: after - before per counter on
// each end (a counter that went backwards was reset and counts from zero);
// counters that did not move, or are absent on either side, are left out.
struct FabricLinkDelta {
  FabricLink link;
  bool uplink = false;  // switch to switch
  std::map<std::string, uint64_t> a, b;

  friend bool operator==(const FabricLinkDelta&, const FabricLinkDelta&) = default;
};

// Every cable of the window's `after` scan that was also a cable before, in
// the scan's order, with what moved on it.
std::vector<FabricLinkDelta> RunFabricLinkDeltas(const RunFabricWindow& window);
// [{"link": "leaf02/9 <-> spine01/2", "uplink": true, "a": END + "deltas",
//   "b": ...}], the links where something moved only.
nlohmann::json FabricLinkDeltasToJson(const std::vector<FabricLinkDelta>& deltas);
// Whether a counter is one of the error or congestion counters (not the
// data and packet counts that grow with any traffic).
bool IsFabricTroubleCounter(const std::string& counter);

// {"before": SCAN, "after": SCAN, "hosts": {host: [guid...]},
//  "unmapped_hosts": [...], "leaves": [...]}; SCAN as core/fabric_scan_json.h.
nlohmann::json RunFabricWindowToJson(const RunFabricWindow& window);
// The inverse; nullopt with the element named in *why.
std::optional<RunFabricWindow> RunFabricWindowFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
