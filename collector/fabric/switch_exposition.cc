#include "collector/fabric/switch_exposition.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "core/prometheus_text.h"

namespace fabtrack::fabric {
namespace {

// The PMA counter (sysfs name, as core/fabric_scan.h keeps them) and the
// infiniband_exporter family it is exported as.
struct SwitchCounter {
  const char* counter;
  const char* metric;
  const char* help;
  bool data = false;  // 4-octet words: exported in bytes
};

const SwitchCounter kCounters[] = {
    {"port_xmit_data", "infiniband_switch_port_transmit_data_bytes_total",
     "Infiniband switch port PortXmitData", true},
    {"port_rcv_data", "infiniband_switch_port_receive_data_bytes_total",
     "Infiniband switch port PortRcvData", true},
    {"port_xmit_packets", "infiniband_switch_port_transmit_packets_total",
     "Infiniband switch port PortXmitPkts"},
    {"port_rcv_packets", "infiniband_switch_port_receive_packets_total",
     "Infiniband switch port PortRcvPkts"},
    {"unicast_xmit_packets", "infiniband_switch_port_unicast_transmit_packets_total",
     "Infiniband switch port PortUnicastXmitPkts"},
    {"unicast_rcv_packets", "infiniband_switch_port_unicast_receive_packets_total",
     "Infiniband switch port PortUnicastRcvPkts"},
    {"multicast_xmit_packets", "infiniband_switch_port_multicast_transmit_packets_total",
     "Infiniband switch port PortMulticastXmitPkts"},
    {"multicast_rcv_packets", "infiniband_switch_port_multicast_receive_packets_total",
     "Infiniband switch port PortMulticastRcvPkts"},
    {"symbol_error", "infiniband_switch_port_symbol_error_total",
     "Infiniband switch port SymbolErrorCounter"},
    {"link_error_recovery", "infiniband_switch_port_link_error_recovery_total",
     "Infiniband switch port LinkErrorRecoveryCounter"},
    {"link_downed", "infiniband_switch_port_link_downed_total",
     "Infiniband switch port LinkDownedCounter"},
    {"port_rcv_errors", "infiniband_switch_port_receive_errors_total",
     "Infiniband switch port PortRcvErrors"},
    {"port_rcv_remote_physical_errors",
     "infiniband_switch_port_receive_remote_physical_errors_total",
     "Infiniband switch port PortRcvRemotePhysicalErrors"},
    {"port_rcv_switch_relay_errors", "infiniband_switch_port_receive_switch_relay_errors_total",
     "Infiniband switch port PortRcvSwitchRelayErrors"},
    {"port_xmit_discards", "infiniband_switch_port_transmit_discards_total",
     "Infiniband switch port PortXmitDiscards"},
    {"port_xmit_constraint_errors", "infiniband_switch_port_transmit_constraint_errors_total",
     "Infiniband switch port PortXmitConstraintErrors"},
    {"port_rcv_constraint_errors", "infiniband_switch_port_receive_constraint_errors_total",
     "Infiniband switch port PortRcvConstraintErrors"},
    {"local_link_integrity_errors", "infiniband_switch_port_local_link_integrity_errors_total",
     "Infiniband switch port LocalLinkIntegrityErrors"},
    {"excessive_buffer_overrun_errors",
     "infiniband_switch_port_excessive_buffer_overrun_errors_total",
     "Infiniband switch port ExcessiveBufferOverrunErrors"},
    {"VL15_dropped", "infiniband_switch_port_vl15_dropped_total",
     "Infiniband switch port VL15Dropped"},
    {"port_xmit_wait", "infiniband_switch_port_transmit_wait_total",
     "Infiniband switch port PortXmitWait"},
};

void Label(std::string* out, const char* name, const std::string& value, bool first = false) {
  if (!first) *out += ',';
  *out += name;
  *out += "=\"";
  AppendPrometheusEscaped(out, value);
  *out += '"';
}

void Head(std::string* out, const char* metric, const char* help, const char* type) {
  *out += "# HELP ";
  *out += metric;
  *out += ' ';
  AppendPrometheusEscaped(out, help, PrometheusText::kHelp);
  *out += "\n# TYPE ";
  *out += metric;
  *out += ' ';
  *out += type;
  *out += '\n';
}

std::string Number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string RenderSwitchExposition(const FabricScan& scan) {
  std::map<std::string, const FabricNode*> nodes;
  for (const FabricNode& n : scan.nodes) nodes[n.guid] = &n;
  auto is_switch = [&](const std::string& guid) {
    auto it = nodes.find(guid);
    return it != nodes.end() && it->second->type == "switch";
  };
  // Switch ports with counters, in the scan's order (by GUID, port).
  std::vector<const FabricPort*> ports;
  for (const FabricPort& p : scan.ports) {
    if (p.port > 0 && is_switch(p.node_guid) && !p.counters.empty()) ports.push_back(&p);
  }
  std::string out;
  for (const SwitchCounter& c : kCounters) {
    bool headed = false;
    for (const FabricPort* p : ports) {
      auto it = p->counters.find(c.counter);
      if (it == p->counters.end()) continue;
      if (!headed) Head(&out, c.metric, c.help, "counter");
      headed = true;
      out += c.metric;
      out += '{';
      Label(&out, "guid", p->node_guid, true);
      Label(&out, "port", std::to_string(p->port));
      out += "} ";
      // Doubles, as every Prometheus sample; exact up to 2^53 bytes.
      out += Number(static_cast<double>(it->second) * (c.data ? 4.0 : 1.0));
      out += '\n';
    }
  }
  // The switches, and the far end of each cabled switch port.
  Head(&out, "infiniband_switch_info", "Infiniband switch information", "gauge");
  for (const FabricNode& n : scan.nodes) {
    if (n.type != "switch") continue;
    out += "infiniband_switch_info{";
    Label(&out, "guid", n.guid, true);
    Label(&out, "switch", n.description);
    Label(&out, "lid", n.lid ? std::to_string(*n.lid) : "");
    out += "} 1\n";
  }
  struct Uplink {
    const FabricLinkEnd* near;
    const FabricLinkEnd* far;
  };
  std::vector<Uplink> uplinks;
  for (const FabricLink& l : scan.links) {
    if (is_switch(l.a.guid)) uplinks.push_back({&l.a, &l.b});
    if (is_switch(l.b.guid)) uplinks.push_back({&l.b, &l.a});
  }
  std::sort(uplinks.begin(), uplinks.end(), [](const Uplink& x, const Uplink& y) {
    return std::pair(x.near->guid, x.near->port) < std::pair(y.near->guid, y.near->port);
  });
  Head(&out, "infiniband_switch_uplink_info", "Infiniband switch uplink information", "gauge");
  for (const Uplink& u : uplinks) {
    auto far = nodes.find(u.far->guid);
    std::optional<int> lid;
    if (const FabricPort* p = FindFabricPort(scan, u.far->guid, u.far->port); p && p->lid) {
      lid = p->lid;
    } else if (far != nodes.end()) {
      lid = far->second->lid;
    }
    out += "infiniband_switch_uplink_info{";
    Label(&out, "guid", u.near->guid, true);
    Label(&out, "port", std::to_string(u.near->port));
    Label(&out, "switch", u.near->description);
    Label(&out, "uplink", u.far->description);
    Label(&out, "uplink_guid", u.far->guid);
    Label(&out, "uplink_type", is_switch(u.far->guid) ? "SW" : "CA");
    Label(&out, "uplink_port", std::to_string(u.far->port));
    Label(&out, "uplink_lid", lid ? std::to_string(*lid) : "");
    out += "} 1\n";
  }
  // fabtrack's own: how the scan went.
  Head(&out, "fabtrack_fabric_scan_duration_seconds", "Seconds the subnet scan took", "gauge");
  out += "fabtrack_fabric_scan_duration_seconds " + Number(scan.duration_s) + "\n";
  Head(&out, "fabtrack_fabric_scan_mads", "MADs the subnet scan sent, retries included", "gauge");
  out += "fabtrack_fabric_scan_mads " + std::to_string(scan.mads_sent) + "\n";
  Head(&out, "fabtrack_fabric_scan_unanswered",
       "Nodes or ports of the subnet that did not answer the scan", "gauge");
  out += "fabtrack_fabric_scan_unanswered " + std::to_string(scan.unanswered.size()) + "\n";
  return out;
}

std::string RenderScanSuccess(bool scanned) {
  std::string out;
  Head(&out, "fabtrack_fabric_scan_success", "1 if this scrape's subnet scan succeeded, else 0",
       "gauge");
  out += scanned ? "fabtrack_fabric_scan_success 1\n" : "fabtrack_fabric_scan_success 0\n";
  return out;
}

}  // namespace fabtrack::fabric
