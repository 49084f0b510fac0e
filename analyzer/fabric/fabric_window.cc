#include "analyzer/fabric/fabric_window.h"

#include <algorithm>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include "core/clock.h"

namespace fabtrack::fabric_analysis {
namespace {

// Views into the scans being compared, which outlive the window's making:
// a subnet of 256 switches has thousands of ports and cables, and keys that
// copied their GUIDs were most of the judging.
using LinkKey = std::tuple<std::string_view, int, std::string_view, int>;
using PortIndex = std::unordered_map<std::string_view, std::vector<const FabricPort*>>;

LinkKey KeyOf(const FabricLink& l) { return {l.a.guid, l.a.port, l.b.guid, l.b.port}; }

PortIndex IndexPorts(const FabricScan& scan) {
  PortIndex out;
  for (const FabricPort& p : scan.ports) {
    if (p.port < 0) continue;
    std::vector<const FabricPort*>& of_node = out[p.node_guid];
    if (of_node.size() <= static_cast<size_t>(p.port)) of_node.resize(p.port + 1);
    of_node[p.port] = &p;
  }
  return out;
}

const FabricPort* Lookup(const PortIndex& index, const FabricLinkEnd& end) {
  auto it = index.find(end.guid);
  if (it == index.end() || end.port < 0 || static_cast<size_t>(end.port) >= it->second.size())
    return nullptr;
  return it->second[end.port];
}

nlohmann::json EndJson(const FabricLinkEnd& end, const LinkSides& side) {
  nlohmann::json j = {{"guid", end.guid}, {"description", end.description}, {"port", end.port}};
  if (side.now && side.now->state) j["state"] = *side.now->state;
  if (side.now && side.now->rate_gbps) j["rate_gbps"] = *side.now->rate_gbps;
  return j;
}

}  // namespace

FabricWindow MakeFabricWindow(const FabricScan* previous, const FabricScan& current) {
  FabricWindow w;
  w.previous = previous;
  w.current = &current;
  if (previous) {
    std::optional<double> t0 = ParseIsoSeconds(previous->scanned_at);
    std::optional<double> t1 = ParseIsoSeconds(current.scanned_at);
    if (t0 && t1) w.seconds = *t1 - *t0;
  }
  PortIndex now_ports = IndexPorts(current);
  PortIndex before_ports;
  if (previous) before_ports = IndexPorts(*previous);
  // node GUID -> type, this scan's first
  std::unordered_map<std::string_view, std::string_view> types;
  if (previous) {
    for (const FabricNode& n : previous->nodes) types[n.guid] = n.type;
  }
  for (const FabricNode& n : current.nodes) types[n.guid] = n.type;
  auto type_of = [&types](const std::string& guid) {
    auto it = types.find(guid);
    return it == types.end() ? std::string_view() : it->second;
  };
  std::map<LinkKey, LinkWindow> links;
  auto add = [&](const FabricLink& l, bool now) {
    LinkWindow& lw = links[KeyOf(l)];
    lw.link = l;
    (now ? lw.is_linked : lw.was_linked) = true;
  };
  if (previous) {
    for (const FabricLink& l : previous->links) add(l, false);
  }
  for (const FabricLink& l : current.links) add(l, true);
  for (auto& [key, lw] : links) {
    lw.a = {Lookup(before_ports, lw.link.a), Lookup(now_ports, lw.link.a)};
    lw.b = {Lookup(before_ports, lw.link.b), Lookup(now_ports, lw.link.b)};
    std::string_view ta = type_of(lw.link.a.guid), tb = type_of(lw.link.b.guid);
    lw.tier = ta == "switch" && tb == "switch"     ? "switch-switch"
              : (ta == "switch" || tb == "switch") ? "switch-ca"
                                                   : "other";
    w.links.push_back(std::move(lw));
  }
  return w;
}

std::optional<uint64_t> CounterDelta(const LinkSides& side, const std::string& counter) {
  if (!side.before || !side.now) return std::nullopt;
  auto b = side.before->counters.find(counter);
  auto a = side.now->counters.find(counter);
  if (b == side.before->counters.end() || a == side.now->counters.end()) return std::nullopt;
  return a->second >= b->second ? a->second - b->second : a->second;
}

Finding LinkFinding(const LinkWindow& w, const std::string& kind, Severity severity,
                    const std::string& message) {
  Finding f;
  f.kind = kind;
  f.severity = severity;
  f.subject = LinkName(w.link);
  f.message = message;
  f.evidence["a"] = EndJson(w.link.a, w.a);
  f.evidence["b"] = EndJson(w.link.b, w.b);
  f.evidence["tier"] = w.tier;
  return f;
}

std::vector<Finding> JudgeFabric(const FabricScan* previous, const FabricScan& current,
                                 const FabricThresholds& thresholds) {
  FabricWindow w = MakeFabricWindow(previous, current);
  std::vector<Finding> out;
  JudgeUnanswered(w, thresholds, out);
  JudgeLinkRate(w, thresholds, out);
  if (previous) {
    JudgeLinkState(w, thresholds, out);
    JudgeErrorCounters(w, thresholds, out);
    JudgeXmitWait(w, thresholds, out);
  }
  std::sort(out.begin(), out.end(), FindingBefore);
  return out;
}

}  // namespace fabtrack::fabric_analysis
