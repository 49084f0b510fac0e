// One scan of an InfiniBand subnet from the management side (`fabtrack
// fabric scan`): the nodes and cables found by discovery, every port's state,
// rate and PMA counters, and what did not answer. Plain data; absent is
// nullopt, never zero.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

struct FabricNode {
  std::string guid;         // node GUID, "0x0002c90300a1b2c3"
  std::string description;  // NodeDescription: "leaf03", "node0012 mlx5_0"
  std::string type;         // "switch" | "ca" | "router"
  int ports = 0;            // physical ports (NodeInfo NumPorts)
  std::optional<int> lid;   // a switch's port 0 LID; a CA's first port's

  friend bool operator==(const FabricNode&, const FabricNode&) = default;
};

// The PMA counters of one port under the sysfs counters/ names that HCA
// ports use (core/port_sample.h: "symbol_error", "port_xmit_wait",
// "port_xmit_data" in 4-octet words, ...), so switch ports and HCA ports
// share deltas, storage and dashboards.
struct FabricPort {
  std::string node_guid;
  int port = 0;
  std::optional<int> lid;                 // where its PMA answers
  std::optional<std::string> state;       // PortInfo PortState: "Active", "Down", ...
  std::optional<std::string> phys_state;  // "LinkUp", "Polling", "Disabled", ...
  std::optional<int> width;               // active lanes: 1, 2, 4, 8, 12
  std::optional<std::string> speed;       // "SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR"
  std::optional<double> rate_gbps;        // width x lane rate
  std::map<std::string, uint64_t> counters;
  // Data and packet counters came from PortCountersExtended (64-bit) because
  // the PMA's ClassPortInfo CapabilityMask says it has them.
  bool counters_64bit = false;
  // Why `counters` is empty: "no answer to PortCounters after 3 tries".
  std::optional<std::string> counters_missing;

  friend bool operator==(const FabricPort&, const FabricPort&) = default;
};

struct FabricLinkEnd {
  std::string guid;
  std::string description;
  int port = 0;

  friend bool operator==(const FabricLinkEnd&, const FabricLinkEnd&) = default;
};

// A cable, both ends. `a` is the end nearer the spine: a switch before a CA,
// and between two switches the one with the lower GUID:port, so the same
// cable has the same ends in every scan.
struct FabricLink {
  FabricLinkEnd a, b;

  friend bool operator==(const FabricLink&, const FabricLink&) = default;
};

// A node or port that discovery or the PMA reads could not reach.
struct FabricUnanswered {
  std::string guid;  // may be empty when only a path is known
  std::string description;
  std::optional<int> port;
  std::string what;  // "PortCounters", "ClassPortInfo", "discovery"
  std::string why;   // "no answer after 3 tries (timeout 200 ms each)"

  friend bool operator==(const FabricUnanswered&, const FabricUnanswered&) = default;
};

struct FabricScan {
  // Special members out of line (the .cc, `= default`): this struct is in most
  // of the project's units, and the implicit ones were compiled again in each
  // (BENCHMARKS.md, "Fresh build CPU", round seven). Declaring them ends
  // aggregate initialisation: set the fields after construction.
  FabricScan();
  FabricScan(const FabricScan&);
  FabricScan(FabricScan&&) noexcept;
  FabricScan& operator=(const FabricScan&);
  FabricScan& operator=(FabricScan&&) noexcept;
  ~FabricScan();

  std::string scanned_at;  // RFC 3339 UTC, when the counters were read
  std::string source;      // the local CA and port the MADs left from: "mlx5_0/1"
  double duration_s = 0;
  double discovery_s = 0;  // of duration_s, the discovery's
  std::vector<FabricNode> nodes;
  std::vector<FabricPort> ports;  // every port of every node, linked or not
  std::vector<FabricLink> links;
  std::vector<FabricUnanswered> unanswered;
  int64_t mads_sent = 0, mads_retried = 0;

  friend bool operator==(const FabricScan&, const FabricScan&) = default;
};

// The port (guid, port) of a scan, or nullptr.
const FabricPort* FindFabricPort(const FabricScan& scan, const std::string& guid, int port);
const FabricNode* FindFabricNode(const FabricScan& scan, const std::string& guid);
// "leaf03/17 <-> spine02/3": how findings and text output name a cable.
std::string LinkName(const FabricLink& link);
std::string EndName(const FabricLinkEnd& end);
// Nodes by GUID, ports by (GUID, port), links by their ends: the order a
// scan has when the scanner or FabricScanFromJson hands it over.
void SortFabricScan(FabricScan& scan);
// The canonical order of a cable's ends (see FabricLink).
FabricLink MakeLink(FabricLinkEnd one, const std::string& one_type, FabricLinkEnd other,
                    const std::string& other_type);

// The switches' ports as port samples, one HostPorts per switch: host = its
// node GUID, device "switch", the port number, its counters under the sysfs
// names, state and rate as sysfs writes them ("ACTIVE", "100 Gb/sec (4X
// EDR)"), data counters also in bytes. Ports whose counters did not answer
// are left out (absent, not zero).
std::vector<HostPorts> FabricSwitchPorts(const FabricScan& scan);

}  // namespace fabtrack
