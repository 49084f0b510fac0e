// The subnet discovery of `fabtrack fabric scan` as a walk over directed-
// route SMPs: which SMP to send next given the answers so far, and the
// nodes, ports and cables they add up to. Pure (no MAD I/O), so the walk is
// tested on a subnet held in memory; subnet_scan_ibmad.cc sends the SMPs,
// many in flight at once, and decodes the answers into the structs below.
//
// What it asks, against libibnetdisc's walk (which `--discovery ibnetdisc`
// still runs): NodeInfo through every LinkUp switch port whose far end is
// not known yet, NodeDescription once per node, PortInfo of every switch
// port (0 included, for the switch's LID) and of each CA port reached. A
// cable between two switches costs one NodeInfo here (the answer names the
// far port, so that end is known when its PortInfo comes), two in
// libibnetdisc; SwitchInfo, which the scan does not use, is not asked.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/fabric_scan.h"

namespace fabtrack::fabric {

// Node types as NodeInfo codes them.
inline constexpr int kNodeTypeCa = 1;
inline constexpr int kNodeTypeSwitch = 2;
inline constexpr int kNodeTypeRouter = 3;
// "0x0002c90300a1b2c3": a GUID as the scan's JSON and ibnetdiscover print it.
std::string GuidText(uint64_t guid);
// "switch", "ca", "router" or "unknown" for a NodeInfo node type (the same
// codes libibnetdisc's nodes carry).
const char* NodeTypeName(int type);
// PortInfo PortPhysicalState LinkUp.
inline constexpr int kPhysLinkUp = 5;
// The longest directed route IBTA allows (hops after the first, 0, entry).
inline constexpr size_t kMaxHops = 63;

struct NodeInfoAnswer {
  int type = 0;
  int ports = 0;  // NumPorts
  uint64_t node_guid = 0;
  int local_port = 0;  // LocalPortNum: the port the SMP came in by
};

struct PortInfoAnswer {
  int lid = 0;
  int state = 0;       // PortState
  int phys_state = 0;  // PortPhysicalState
  int width_active = 0;
  int speed_active = 0;
  int speed_ext_active = 0;
};

// A directed route: the port out of each hop, held inline (a walk of a
// large subnet keeps tens of thousands of requests).
class DrPath {
 public:
  size_t size() const { return size_; }
  const uint8_t* begin() const { return ports_.data(); }
  const uint8_t* end() const { return ports_.data() + size_; }
  // A route at kMaxHops takes no more (the walk checks first).
  void push_back(uint8_t port) {
    if (size_ < kMaxHops) ports_[size_++] = port;
  }
  friend bool operator==(const DrPath& x, const DrPath& y) {
    return std::equal(x.begin(), x.end(), y.begin(), y.end());
  }

 private:
  std::array<uint8_t, kMaxHops> ports_{};
  uint8_t size_ = 0;
};

struct SmpRequest {
  enum Kind { kNodeInfo, kNodeDescription, kPortInfo };
  Kind kind = kNodeInfo;
  DrPath path;    // directed route: the ports out of each hop
  int node = -1;  // the walk's node asked (NodeDescription, PortInfo)
  int port = 0;   // PortInfo's port (the attribute modifier)
  // NodeInfo: the node and port it was sent out of (-1: the local node).
  int from_node = -1, from_port = 0;

  friend bool operator==(const SmpRequest&, const SmpRequest&) = default;
};

class SmpWalk {
 public:
  // The first SMP: NodeInfo of the local node (the empty route).
  SmpRequest Start() const { return SmpRequest{}; }

  // Each answer adds to the subnet and appends the SMPs it calls for to
  // `next`; a request that got no answer (after its retries) is NoAnswer.
  void OnNodeInfo(const SmpRequest& asked, const NodeInfoAnswer& answer,
                  std::vector<SmpRequest>* next);
  void OnNodeDescription(const SmpRequest& asked, std::string description);
  void OnPortInfo(const SmpRequest& asked, const PortInfoAnswer& answer,
                  std::vector<SmpRequest>* next);
  void NoAnswer(const SmpRequest& asked);

  // The subnet found: nodes in GUID order, each one's ports in port order
  // (every switch port that answered PortInfo, a CA's ports reached), every
  // cable once (MakeLink's order), and each LinkUp switch port with nothing
  // known behind it as unanswered ("discovery"). Times, counters and MAD
  // counts are the caller's. `convert` turns a PortInfo into a port's
  // state, width and speed (the walk fills in node, port number and LID); a
  // port known only as a cable's end gets a zero PortInfo.
  FabricScan Result(const std::function<FabricPort(const PortInfoAnswer&)>& convert) const;

  size_t node_count() const { return nodes_.size(); }

 private:
  struct Port {
    std::optional<PortInfoAnswer> info;
    bool asked = false;  // PortInfo sent
    int remote_node = -1, remote_port = 0;
  };
  struct Node {
    NodeInfoAnswer info;
    std::string description;
    DrPath path;
    std::vector<Port> ports;  // 0..NumPorts
  };
  Port* PortOf(int node, int port);
  void AskPortInfo(int node, int port, std::vector<SmpRequest>* next);

  std::vector<Node> nodes_;
  std::unordered_map<uint64_t, int> by_guid_;
  int local_node_ = -1, local_port_ = 0;
};

}  // namespace fabtrack::fabric
