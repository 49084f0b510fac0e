#include "core/counter_deltas.h"

#include <algorithm>
#include <set>

namespace fabtrack {
namespace {

const PortSample* Find(const HostPorts& host, const std::string& device, int port) {
  for (const PortSample& p : host.ports) {
    if (p.device == device && p.port == port) return &p;
  }
  return nullptr;
}

bool Contains(const std::vector<std::string>& v, const std::string& s) {
  return std::find(v.begin(), v.end(), s) != v.end();
}

void AddDelta(const std::string& device, int port, const std::string& name,
              std::optional<uint64_t> before, std::optional<uint64_t> after, bool saturated,
              double seconds, PortDeltas* out) {
  CounterDelta d;
  d.device = device;
  d.port = port;
  d.counter = name;
  d.saturated = saturated;
  if (before && after && !saturated) {
    if (*after >= *before) {
      d.delta = *after - *before;
    } else {
      d.reset_seen = true;
      d.delta = *after;  // counted up again from zero after the reset
    }
    if (seconds > 0) d.per_second = static_cast<double>(*d.delta) / seconds;
  }
  out->deltas.push_back(d);
}

std::optional<uint64_t> Get(const std::map<std::string, uint64_t>& m, const std::string& k) {
  auto it = m.find(k);
  if (it == m.end()) return std::nullopt;
  return it->second;
}

}  // namespace

PortDeltas ComputeDeltas(const HostPorts& before, const HostPorts& after, double seconds) {
  PortDeltas out;
  for (const PortSample& a : after.ports) {
    const PortSample* b = Find(before, a.device, a.port);
    if (b == nullptr) {
      out.unmatched_ports.push_back(a.device + "/" + std::to_string(a.port));
      continue;
    }
    std::set<std::string> names;
    for (const auto& [k, v] : a.counters) names.insert(k);
    for (const auto& [k, v] : b->counters) names.insert(k);
    for (const std::string& name : names) {
      // Saturated at the end of the window: how much it counted is unknown.
      bool saturated = Contains(a.saturated, name);
      AddDelta(a.device, a.port, name, Get(b->counters, name), Get(a.counters, name), saturated,
               seconds, &out);
    }
    // hw_counters and the RoCE netdev's ethtool statistics (PFC pauses) are
    // 64-bit and never saturate; prefixed so their names cannot clash with
    // counters/ files.
    for (const auto& [prefix, member] : {std::pair{"hw:", &PortSample::hw_counters},
                                         std::pair{"ethtool:", &PortSample::ethtool}}) {
      std::set<std::string> extra;
      for (const auto& [k, v] : a.*member) extra.insert(k);
      for (const auto& [k, v] : b->*member) extra.insert(k);
      for (const std::string& name : extra) {
        AddDelta(a.device, a.port, prefix + name, Get(b->*member, name), Get(a.*member, name),
                 false, seconds, &out);
      }
    }
    bool xmit_saturated = Contains(a.saturated, "port_xmit_data");
    bool rcv_saturated = Contains(a.saturated, "port_rcv_data");
    AddDelta(a.device, a.port, "xmit_bytes", b->xmit_bytes, a.xmit_bytes, xmit_saturated, seconds,
             &out);
    AddDelta(a.device, a.port, "rcv_bytes", b->rcv_bytes, a.rcv_bytes, rcv_saturated, seconds,
             &out);
  }
  for (const PortSample& b : before.ports) {
    if (Find(after, b.device, b.port) == nullptr) {
      out.unmatched_ports.push_back(b.device + "/" + std::to_string(b.port));
    }
  }
  return out;
}

}  // namespace fabtrack
