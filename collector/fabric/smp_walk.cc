#include "collector/fabric/smp_walk.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <utility>

namespace fabtrack::fabric {

std::string GuidText(uint64_t guid) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(guid));
  return buf;
}

const char* NodeTypeName(int type) {
  switch (type) {
    case kNodeTypeSwitch:
      return "switch";
    case kNodeTypeCa:
      return "ca";
    case kNodeTypeRouter:
      return "router";
    default:
      return "unknown";
  }
}

SmpWalk::Port* SmpWalk::PortOf(int node, int port) {
  if (node < 0 || static_cast<size_t>(node) >= nodes_.size()) return nullptr;
  std::vector<Port>& ports = nodes_[node].ports;
  if (port < 0 || static_cast<size_t>(port) >= ports.size()) return nullptr;
  return &ports[port];
}

void SmpWalk::AskPortInfo(int node, int port, std::vector<SmpRequest>* next) {
  Port* p = PortOf(node, port);
  if (!p || p->asked) return;
  p->asked = true;
  SmpRequest r;
  r.kind = SmpRequest::kPortInfo;
  r.path = nodes_[node].path;
  r.node = node;
  r.port = port;
  next->push_back(std::move(r));
}

void SmpWalk::OnNodeInfo(const SmpRequest& asked, const NodeInfoAnswer& answer,
                         std::vector<SmpRequest>* next) {
  auto [it, is_new] = by_guid_.try_emplace(answer.node_guid, static_cast<int>(nodes_.size()));
  const int index = it->second;
  if (is_new) {
    Node node;
    node.info = answer;
    node.path = asked.path;
    // Switches: port 0 (management) to NumPorts; a CA port number can be
    // anything up to NumPorts too.
    node.ports.resize(static_cast<size_t>(std::max(answer.ports, answer.local_port)) + 1);
    nodes_.push_back(std::move(node));
  }
  Node& node = nodes_[index];
  if (static_cast<size_t>(answer.local_port) >= node.ports.size())
    node.ports.resize(static_cast<size_t>(answer.local_port) + 1);
  if (asked.from_node < 0) {
    local_node_ = index;
    local_port_ = answer.local_port;
  } else if (Port* from = PortOf(asked.from_node, asked.from_port)) {
    // Both ends of the cable are known now: the far end's NodeInfo is not
    // asked again from this side.
    Port& here = node.ports[answer.local_port];
    if (Port* old = PortOf(here.remote_node, here.remote_port); old && old != from)
      old->remote_node = -1;
    if (Port* old = PortOf(from->remote_node, from->remote_port); old && old != &here)
      old->remote_node = -1;
    here.remote_node = asked.from_node;
    here.remote_port = asked.from_port;
    from->remote_node = index;
    from->remote_port = answer.local_port;
  }
  if (is_new) {
    SmpRequest desc;
    desc.kind = SmpRequest::kNodeDescription;
    desc.path = node.path;
    desc.node = index;
    next->push_back(std::move(desc));
    if (node.info.type == kNodeTypeSwitch) {
      for (int p = 0; p <= node.info.ports; ++p) AskPortInfo(index, p, next);
    }
  }
  if (nodes_[index].info.type != kNodeTypeSwitch) AskPortInfo(index, answer.local_port, next);
}

void SmpWalk::OnNodeDescription(const SmpRequest& asked, std::string description) {
  if (asked.node < 0 || static_cast<size_t>(asked.node) >= nodes_.size()) return;
  // NodeDescription is 64 octets, NUL-padded.
  description.resize(std::min(description.find('\0'), description.size()));
  // Free text an admin set, cut at 64 octets perhaps inside a character:
  // bytes that are not UTF-8 become U+FFFD. Kept as they came, the scan's
  // JSON could not be written (nlohmann throws): `fabric scan --cluster`
  // ended without storing or spooling the scan.
  description =
      nlohmann::json::parse(nlohmann::json(description)
                                .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace))
          .get<std::string>();
  nodes_[asked.node].description = std::move(description);
}

void SmpWalk::OnPortInfo(const SmpRequest& asked, const PortInfoAnswer& answer,
                         std::vector<SmpRequest>* next) {
  Port* p = PortOf(asked.node, asked.port);
  if (!p) return;
  p->info = answer;
  const Node& node = nodes_[asked.node];
  if (asked.port == 0 || answer.phys_state != kPhysLinkUp || p->remote_node >= 0) return;
  // Through a switch port, or out of the local CA's own port; a route
  // cannot pass through a CA.
  const bool out_of_local = asked.node == local_node_ && asked.port == local_port_;
  if (node.info.type != kNodeTypeSwitch && !out_of_local) return;
  if (node.path.size() >= kMaxHops) return;
  SmpRequest r;
  r.kind = SmpRequest::kNodeInfo;
  r.path = node.path;
  r.path.push_back(static_cast<uint8_t>(asked.port));
  r.from_node = asked.node;
  r.from_port = asked.port;
  next->push_back(std::move(r));
}

void SmpWalk::NoAnswer(const SmpRequest&) {
  // Nothing to add: a NodeInfo that got no answer leaves its port without a
  // far end (Result names it), a PortInfo leaves the port out, a
  // NodeDescription leaves the description empty.
}

FabricScan SmpWalk::Result(const std::function<FabricPort(const PortInfoAnswer&)>& convert) const {
  std::vector<int> order(nodes_.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int>(i);
  std::sort(order.begin(), order.end(),
            [this](int x, int y) { return nodes_[x].info.node_guid < nodes_[y].info.node_guid; });
  std::vector<std::string> guids(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) guids[i] = GuidText(nodes_[i].info.node_guid);
  FabricScan scan;
  size_t ports = 0;
  for (const Node& n : nodes_) ports += n.ports.size();
  scan.nodes.reserve(nodes_.size());
  scan.ports.reserve(ports);
  scan.links.reserve(ports / 2);
  for (int i : order) {
    const Node& n = nodes_[i];
    const bool is_switch = n.info.type == kNodeTypeSwitch;
    FabricNode node;
    node.guid = guids[i];
    node.description = n.description;
    node.type = NodeTypeName(n.info.type);
    node.ports = n.info.ports;
    // A switch's ports share its port 0 LID; the PMA answers there.
    const int switch_lid = is_switch && n.ports[0].info ? n.ports[0].info->lid : 0;
    for (size_t pn = 0; pn < n.ports.size(); ++pn) {
      const Port& p = n.ports[pn];
      if (!p.info && p.remote_node < 0) continue;  // never reached
      FabricPort port = convert(p.info.value_or(PortInfoAnswer{}));
      port.node_guid = node.guid;
      port.port = static_cast<int>(pn);
      const int lid = is_switch ? switch_lid : (p.info ? p.info->lid : 0);
      port.lid = lid > 0 ? std::optional<int>(lid) : std::nullopt;
      if (!node.lid && port.lid) node.lid = port.lid;
      if (p.remote_node >= 0) {
        // Each cable once, from its `a` end (MakeLink's order: a switch
        // before anything else, else the lower GUID:port; the GUID texts
        // sort as the numbers do), built only there.
        const Node& r = nodes_[p.remote_node];
        const bool there_switch = r.info.type == kNodeTypeSwitch;
        const bool here_first = is_switch != there_switch
                                    ? is_switch
                                    : std::pair(n.info.node_guid, static_cast<int>(pn)) <
                                          std::pair(r.info.node_guid, p.remote_port);
        if (here_first) {
          scan.links.push_back({{node.guid, node.description, static_cast<int>(pn)},
                                {guids[p.remote_node], r.description, p.remote_port}});
        }
      } else if (is_switch && pn > 0 && p.info && p.info->phys_state == kPhysLinkUp) {
        scan.unanswered.push_back({node.guid, node.description, static_cast<int>(pn), "discovery",
                                   "the port is LinkUp but the node behind it did not answer"});
      }
      scan.ports.push_back(std::move(port));
    }
    if (is_switch) node.lid = switch_lid > 0 ? std::optional<int>(switch_lid) : std::nullopt;
    scan.nodes.push_back(std::move(node));
  }
  SortFabricScan(scan);
  return scan;
}

}  // namespace fabtrack::fabric
