#include "collector/counters/port_exposition.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string_view>

#include "collector/counters/hw_counter_selection.h"
#include "collector/counters/sysfs_ports.h"
#include "core/prometheus_text.h"

namespace fabtrack {

const std::vector<NodeExporterCounter>& NodeExporterCounters() {
  // Facts from node_exporter's infiniband collector (names and help texts).
  static const auto* counters = [] {
    auto* v = new std::vector<NodeExporterCounter>{
        {"link_downed", "node_infiniband_link_downed_total",
         "Number of times the link failed to recover from an error state and went down"},
        {"link_error_recovery", "node_infiniband_link_error_recovery_total",
         "Number of times the link successfully recovered from an error state"},
        {"multicast_rcv_packets", "node_infiniband_multicast_packets_received_total",
         "Number of multicast packets received (including errors)"},
        {"multicast_xmit_packets", "node_infiniband_multicast_packets_transmitted_total",
         "Number of multicast packets transmitted (including errors)"},
        {"unicast_rcv_packets", "node_infiniband_unicast_packets_received_total",
         "Number of unicast packets received (including errors)"},
        {"unicast_xmit_packets", "node_infiniband_unicast_packets_transmitted_total",
         "Number of unicast packets transmitted (including errors)"},
        {"excessive_buffer_overrun_errors", "node_infiniband_excessive_buffer_overrun_errors_total",
         "Number of times that OverrunErrors consecutive flow control update periods occurred"},
        {"local_link_integrity_errors", "node_infiniband_local_link_integrity_errors_total",
         "Number of times that the count of local physical errors exceeded the threshold"},
        {"port_rcv_constraint_errors", "node_infiniband_port_constraint_errors_received_total",
         "Number of packets received on the switch physical port that are discarded"},
        {"port_xmit_constraint_errors", "node_infiniband_port_constraint_errors_transmitted_total",
         "Number of packets not transmitted from the switch physical port"},
        {"port_xmit_discards", "node_infiniband_port_discards_transmitted_total",
         "Number of outbound packets discarded by the port because the port is down or "
         "congested"},
        {"port_rcv_errors", "node_infiniband_port_errors_received_total",
         "Number of packets containing an error that were received on this port"},
        {"port_rcv_packets", "node_infiniband_port_packets_received_total",
         "Number of packets received on all VLs by this port (including errors)"},
        {"port_xmit_packets", "node_infiniband_port_packets_transmitted_total",
         "Number of packets transmitted on all VLs from this port (including errors)"},
        {"port_xmit_wait", "node_infiniband_port_transmit_wait_total",
         "Number of ticks during which the port had data to transmit but no data was sent"},
        {"port_rcv_remote_physical_errors",
         "node_infiniband_port_receive_remote_physical_errors_total",
         "Number of packets marked with the EBP delimiter received on the port"},
        {"port_rcv_switch_relay_errors", "node_infiniband_port_receive_switch_relay_errors_total",
         "Number of packets that could not be forwarded by the switch"},
        {"symbol_error", "node_infiniband_symbol_error_total",
         "Number of minor link errors detected on one or more physical lanes"},
        {"VL15_dropped", "node_infiniband_vl15_dropped_total",
         "Number of incoming VL15 packets dropped due to resource limitations"},
    };
    std::sort(v->begin(), v->end(), [](const NodeExporterCounter& a, const NodeExporterCounter& b) {
      return std::string_view(a.sysfs_file) < std::string_view(b.sysfs_file);
    });
    return v;
  }();
  return *counters;
}

namespace {

constexpr const char* kHwStat = "fabtrack_rdma_hw_stat_total";
constexpr const char* kHwStatHelp =
    "Driver hw_counters of the port (mlx5: CNP/ECN congestion, retransmits, sequence errors)";
constexpr const char* kFlowControl = "fabtrack_roce_flow_control_total";
constexpr const char* kFlowControlHelp =
    "RoCE netdev flow-control statistics from the ethtool ioctl (PFC pause, per priority)";
constexpr const char* kSaturated = "fabtrack_rdma_saturated";
constexpr const char* kSaturatedHelp =
    "1 when a legacy narrow counter is stuck at its maximum (its increase is unknown)";

// Appends exposition text; HELP/TYPE go out with a family's first sample, so
// a family with no samples on this host is left out entirely.
class Writer {
 public:
  explicit Writer(std::string* out) : out_(out) {}

  void Family(const char* name, const char* help, const char* type) {
    name_ = name;
    help_ = help;
    type_ = type;
    header_done_ = false;
  }
  // Starts a sample of the current family: name{first_label="value"
  void Begin(std::string_view label, std::string_view value) {
    Begin();
    Label(label, value, /*first=*/true);
  }
  // name{ (after the family's HELP and TYPE, on its first sample)
  void Begin() {
    if (!header_done_) {
      header_done_ = true;
      Append("# HELP ");
      Append(name_);
      Append(" ");
      AppendPrometheusEscaped(out_, help_, PrometheusText::kHelp);
      Append("\n# TYPE ");
      Append(name_);
      Append(" ");
      Append(type_);
      Append("\n");
    }
    Append(name_);
    Append("{");
  }
  // Starts a sample whose first labels are already rendered ("a=\"x\",b=\"y\"").
  void BeginRendered(std::string_view labels) {
    Begin();
    Append(labels);
  }
  void Label(std::string_view label, std::string_view value, bool first = false) {
    if (!first) Append(",");
    Append(label);
    Append("=\"");
    AppendPrometheusEscaped(out_, value);
    Append("\"");
  }
  void Label(std::string_view label, int value) {
    char digits[16];
    auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    Label(label, std::string_view(digits, end - digits));
  }
  // Counters are exact integers: no detour through double, which would round
  // values above 2^53.
  void End(uint64_t value) {
    char digits[24];
    auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;
    Append("} ");
    out_->append(digits, end);
    Append("\n");
  }
  void End(double value) {
    Append("} ");
    if (std::isnan(value)) {
      Append("NaN");
    } else if (std::isinf(value)) {
      Append(value > 0 ? "+Inf" : "-Inf");
    } else if (value == std::trunc(value) && std::fabs(value) < 9007199254740992.0) {
      // Whole numbers as integers ("25000000000", not "2.5e+10"), as
      // node_exporter users are used to seeing rates.
      char digits[24];
      auto end = std::to_chars(digits, digits + sizeof digits, static_cast<int64_t>(value)).ptr;
      out_->append(digits, end);
    } else {
      char digits[32];
      auto end = std::to_chars(digits, digits + sizeof digits, value).ptr;  // round-trips
      out_->append(digits, end);
    }
    Append("\n");
  }

 private:
  void Append(std::string_view s) { out_->append(s); }
  std::string* out_;
  const char* name_ = "";
  const char* help_ = "";
  const char* type_ = "";
  bool header_done_ = false;
};

}  // namespace

const std::string& PortExposition::Render(const HostPorts& host, const ScrapeOutcome& scrape) {
  // Each port's device and port labels, rendered once per scrape rather
  // than once per family (~40 of them).
  if (port_labels_.size() < host.ports.size()) port_labels_.resize(host.ports.size());
  for (size_t i = 0; i < host.ports.size(); ++i) {
    port_labels_[i].clear();
    Writer labels(&port_labels_[i]);
    labels.Label("device", host.ports[i].device, /*first=*/true);
    labels.Label("port", host.ports[i].port);
  }
  text_.clear();
  Writer w(&text_);
  const std::string_view none;
  auto port_labels = [&](const PortSample& p) {
    w.BeginRendered(port_labels_[static_cast<size_t>(&p - host.ports.data())]);
  };

  w.Family("node_infiniband_info",
           "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.", "gauge");
  for (size_t i = 0; i < host.ports.size(); ++i) {
    const PortSample& p = host.ports[i];
    // One line per device: its first port carries the device-level files.
    bool device_seen = false;
    for (size_t j = 0; j < i && !device_seen; ++j) device_seen = host.ports[j].device == p.device;
    if (device_seen) continue;
    w.Begin("device", p.device);
    w.Label("board_id", p.board_id ? std::string_view(*p.board_id) : none);
    w.Label("firmware_version", p.fw_version ? std::string_view(*p.fw_version) : none);
    w.Label("hca_type", none);
    w.End(uint64_t{1});
  }

  w.Family("node_infiniband_state_id",
           "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, 5: "
           "act defer)",
           "gauge");
  for (const PortSample& p : host.ports) {
    if (!p.state_code) continue;
    port_labels(p);
    w.End(static_cast<double>(*p.state_code));
  }
  w.Family("node_infiniband_physical_state_id",
           "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: "
           "disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
           "gauge");
  for (const PortSample& p : host.ports) {
    if (!p.phys_state_code) continue;
    port_labels(p);
    w.End(static_cast<double>(*p.phys_state_code));
  }
  w.Family("node_infiniband_rate_bytes_per_second", "Maximum signal transfer rate", "gauge");
  for (const PortSample& p : host.ports) {
    if (!p.rate_gbps) continue;
    port_labels(p);
    w.End(*p.rate_gbps * 1e9 / 8);
  }
  w.Family("node_infiniband_port_data_received_bytes_total",
           "Number of data octets received on all links", "counter");
  for (const PortSample& p : host.ports) {
    if (!p.rcv_bytes) continue;
    port_labels(p);
    w.End(*p.rcv_bytes);
  }
  w.Family("node_infiniband_port_data_transmitted_bytes_total",
           "Number of data octets transmitted on all links", "counter");
  for (const PortSample& p : host.ports) {
    if (!p.xmit_bytes) continue;
    port_labels(p);
    w.End(*p.xmit_bytes);
  }

  RenderNodeExporterCounters(host);

  w.Family(kHwStat, kHwStatHelp, "counter");
  for (const PortSample& p : host.ports) {
    for (const auto& [name, value] : p.hw_counters) {
      port_labels(p);
      w.Label("counter", name);
      w.End(value);
    }
  }
  w.Family(kFlowControl, kFlowControlHelp, "counter");
  for (const PortSample& p : host.ports) {
    for (const auto& [name, value] : p.ethtool) {
      port_labels(p);
      w.Label("netdev", p.netdev ? std::string_view(*p.netdev) : none);
      w.Label("counter", name);
      w.End(value);
    }
  }
  w.Family(kSaturated, kSaturatedHelp, "gauge");
  for (const PortSample& p : host.ports) {
    for (const std::string& name : p.saturated) {
      port_labels(p);
      w.Label("counter", name);
      w.End(uint64_t{1});
    }
  }

  if (scrape.sampler != nullptr) {
    w.Family("fabtrack_exporter_sampler_mode",
             "fabtrack: How the port counters are read: fast (one pread per value on kept file "
             "descriptors; saturated legacy counters included) or fallback (a full sysfs walk).",
             "gauge");
    for (const char* mode : {"fallback", "fast"}) {
      w.Begin("mode", mode);
      w.End(uint64_t{scrape.sampler->fast == (std::string_view(mode) == "fast") ? 1u : 0u});
    }
  }
  if (scrape.hw_counters != nullptr) {
    // What fabtrack_rdma_hw_stat_total can hold: a counter missing under
    // "none" or a list was not read, rather than absent on the device.
    using Mode = HwCounterSelection::Mode;
    w.Family("fabtrack_exporter_hw_counters_selection",
             "fabtrack: Which driver hw_counters/ files are read (--hw-counters): all, the listed "
             "ones or none.",
             "gauge");
    for (auto [label, mode] : {std::pair{"all", Mode::kAll}, std::pair{"listed", Mode::kListed},
                               std::pair{"none", Mode::kNone}}) {
      w.Begin("selection", label);
      w.End(uint64_t{scrape.hw_counters->mode == mode ? 1u : 0u});
    }
    w.Family("fabtrack_exporter_hw_counters_listed",
             "fabtrack: A hw_counters/ file named by --hw-counters (value always 1; a device may "
             "lack it).",
             "gauge");
    if (scrape.hw_counters->mode == Mode::kListed) {
      for (const std::string& name : scrape.hw_counters->names) {
        w.Begin("counter", name);
        w.End(uint64_t{1});
      }
    }
  }
  w.Family("fabtrack_scrape_collector_duration_seconds",
           "fabtrack: Duration of a collector scrape.", "gauge");
  w.Begin("collector", "infiniband");
  w.End(scrape.duration_seconds);
  w.Family("fabtrack_scrape_collector_success", "fabtrack: Whether a collector succeeded.",
           "gauge");
  w.Begin("collector", "infiniband");
  w.End(uint64_t{scrape.success ? 1u : 0u});
  return text_;
}

void PortExposition::RenderNodeExporterCounters(const HostPorts& host) {
  const auto& table = NodeExporterCounters();
  // One ordered merge per port (both sides sorted by file name) instead of a
  // map lookup per family and port: no temporary strings.
  if (counter_values_.size() < host.ports.size()) counter_values_.resize(host.ports.size());
  for (size_t i = 0; i < host.ports.size(); ++i) {
    auto& values = counter_values_[i];
    values.assign(table.size(), std::nullopt);
    auto file = host.ports[i].counters.begin();
    const auto files_end = host.ports[i].counters.end();
    for (size_t k = 0; k < table.size() && file != files_end; ++k) {
      const std::string_view wanted(table[k].sysfs_file);
      while (file != files_end && std::string_view(file->first) < wanted) ++file;
      if (file != files_end && file->first == wanted) values[k] = file->second;
    }
  }
  Writer w(&text_);
  for (size_t k = 0; k < table.size(); ++k) {
    w.Family(table[k].metric, table[k].help, "counter");
    for (size_t i = 0; i < host.ports.size(); ++i) {
      if (!counter_values_[i][k]) continue;
      w.BeginRendered(port_labels_[i]);
      w.End(*counter_values_[i][k]);
    }
  }
}

std::string RenderPortExposition(const HostPorts& host, const ScrapeOutcome& scrape) {
  PortExposition exposition;
  return exposition.Render(host, scrape);
}

}  // namespace fabtrack
