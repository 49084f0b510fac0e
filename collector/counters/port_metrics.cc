#include "collector/counters/port_metrics.h"

#include <prometheus/text_serializer.h>

#include <chrono>
#include <map>
#include <sstream>

namespace fabtrack {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

struct CounterName {
  const char* metric;  // after node_infiniband_
  const char* help;
};

// sysfs counter file -> node_exporter metric (facts from its infiniband collector).
const std::map<std::string, CounterName>& NodeExporterCounters() {
  static const auto* names = new std::map<std::string, CounterName>{
      {"link_downed",
       {"link_downed_total",
        "Number of times the link failed to recover from an error state and went down"}},
      {"link_error_recovery",
       {"link_error_recovery_total",
        "Number of times the link successfully recovered from an error state"}},
      {"multicast_rcv_packets",
       {"multicast_packets_received_total",
        "Number of multicast packets received (including errors)"}},
      {"multicast_xmit_packets",
       {"multicast_packets_transmitted_total",
        "Number of multicast packets transmitted (including errors)"}},
      {"unicast_rcv_packets",
       {"unicast_packets_received_total", "Number of unicast packets received (including errors)"}},
      {"unicast_xmit_packets",
       {"unicast_packets_transmitted_total",
        "Number of unicast packets transmitted (including errors)"}},
      {"excessive_buffer_overrun_errors",
       {"excessive_buffer_overrun_errors_total",
        "Number of times that OverrunErrors consecutive flow control update periods occurred"}},
      {"local_link_integrity_errors",
       {"local_link_integrity_errors_total",
        "Number of times that the count of local physical errors exceeded the threshold"}},
      {"port_rcv_constraint_errors",
       {"port_constraint_errors_received_total",
        "Number of packets received on the switch physical port that are discarded"}},
      {"port_xmit_constraint_errors",
       {"port_constraint_errors_transmitted_total",
        "Number of packets not transmitted from the switch physical port"}},
      {"port_xmit_discards",
       {"port_discards_transmitted_total",
        "Number of outbound packets discarded by the port because the port is down or congested"}},
      {"port_rcv_errors",
       {"port_errors_received_total",
        "Number of packets containing an error that were received on this port"}},
      {"port_rcv_packets",
       {"port_packets_received_total",
        "Number of packets received on all VLs by this port (including errors)"}},
      {"port_xmit_packets",
       {"port_packets_transmitted_total",
        "Number of packets transmitted on all VLs from this port (including errors)"}},
      {"port_xmit_wait",
       {"port_transmit_wait_total",
        "Number of ticks during which the port had data to transmit but no data was sent"}},
      {"port_rcv_remote_physical_errors",
       {"port_receive_remote_physical_errors_total",
        "Number of packets marked with the EBP delimiter received on the port"}},
      {"port_rcv_switch_relay_errors",
       {"port_receive_switch_relay_errors_total",
        "Number of packets that could not be forwarded by the switch"}},
      {"symbol_error",
       {"symbol_error_total",
        "Number of minor link errors detected on one or more physical lanes"}},
      {"VL15_dropped",
       {"vl15_dropped_total",
        "Number of incoming VL15 packets dropped due to resource limitations"}},
  };
  return *names;
}

class Families {
 public:
  MetricFamily& Get(const std::string& name, const std::string& help, MetricType type) {
    auto it = index_.find(name);
    if (it != index_.end()) return families_[it->second];
    index_[name] = families_.size();
    families_.push_back(MetricFamily{name, help, type, {}});
    return families_.back();
  }
  void Add(const std::string& name, const std::string& help, MetricType type,
           std::vector<ClientMetric::Label> labels, double value) {
    ClientMetric m;
    m.label = std::move(labels);
    if (type == MetricType::Counter) {
      m.counter.value = value;
    } else {
      m.gauge.value = value;
    }
    Get(name, help, type).metric.push_back(std::move(m));
  }
  std::vector<MetricFamily> Take() { return std::move(families_); }

 private:
  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

}  // namespace

std::vector<MetricFamily> PortMetricFamilies(const HostPorts& host) {
  Families f;
  std::map<std::string, bool> info_done;
  for (const PortSample& p : host.ports) {
    const std::string port = std::to_string(p.port);
    if (!info_done[p.device]) {
      info_done[p.device] = true;
      f.Add("node_infiniband_info",
            "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.",
            MetricType::Gauge,
            {{"device", p.device},
             {"board_id", p.board_id.value_or("")},
             {"firmware_version", p.fw_version.value_or("")},
             {"hca_type", ""}},
            1);
    }
    std::vector<ClientMetric::Label> labels = {{"device", p.device}, {"port", port}};
    if (p.state_code) {
      f.Add("node_infiniband_state_id",
            "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, "
            "5: act defer)",
            MetricType::Gauge, labels, *p.state_code);
    }
    if (p.phys_state_code) {
      f.Add("node_infiniband_physical_state_id",
            "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: "
            "disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
            MetricType::Gauge, labels, *p.phys_state_code);
    }
    if (p.rate_gbps) {
      f.Add("node_infiniband_rate_bytes_per_second", "Maximum signal transfer rate",
            MetricType::Gauge, labels, *p.rate_gbps * 1e9 / 8);
    }
    if (p.rcv_bytes) {
      f.Add("node_infiniband_port_data_received_bytes_total",
            "Number of data octets received on all links", MetricType::Counter, labels,
            static_cast<double>(*p.rcv_bytes));
    }
    if (p.xmit_bytes) {
      f.Add("node_infiniband_port_data_transmitted_bytes_total",
            "Number of data octets transmitted on all links", MetricType::Counter, labels,
            static_cast<double>(*p.xmit_bytes));
    }
    for (const auto& [file, value] : p.counters) {
      auto it = NodeExporterCounters().find(file);
      if (it == NodeExporterCounters().end()) continue;
      f.Add(std::string("node_infiniband_") + it->second.metric, it->second.help,
            MetricType::Counter, labels, static_cast<double>(value));
    }
    for (const auto& [name, value] : p.hw_counters) {
      auto l = labels;
      l.push_back({"counter", name});
      f.Add("fabtrack_rdma_hw_stat_total",
            "Driver hw_counters of the port (mlx5: CNP/ECN congestion, retransmits, sequence "
            "errors)",
            MetricType::Counter, l, static_cast<double>(value));
    }
    for (const auto& [name, value] : p.ethtool) {
      auto l = labels;
      l.push_back({"netdev", p.netdev.value_or("")});
      l.push_back({"counter", name});
      f.Add("fabtrack_roce_flow_control_total",
            "RoCE netdev flow-control statistics from the ethtool ioctl (PFC pause, per "
            "priority)",
            MetricType::Counter, l, static_cast<double>(value));
    }
    for (const std::string& name : p.saturated) {
      auto l = labels;
      l.push_back({"counter", name});
      f.Add("fabtrack_rdma_saturated",
            "1 when a legacy narrow counter is stuck at its maximum (its increase is unknown)",
            MetricType::Gauge, l, 1);
    }
  }
  return f.Take();
}

std::vector<MetricFamily> PortCollector::Collect() const {
  auto start = std::chrono::steady_clock::now();
  std::vector<MetricFamily> families;
  bool ok = true;
  try {
    families = PortMetricFamilies(reader_());
  } catch (const std::exception&) {
    ok = false;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  Families self;
  self.Add("fabtrack_scrape_collector_duration_seconds",
           "fabtrack: Duration of a collector scrape.", MetricType::Gauge,
           {{"collector", "infiniband"}}, seconds);
  self.Add("fabtrack_scrape_collector_success", "fabtrack: Whether a collector succeeded.",
           MetricType::Gauge, {{"collector", "infiniband"}}, ok ? 1 : 0);
  for (auto& family : self.Take()) families.push_back(std::move(family));
  return families;
}

std::string RenderText(const std::vector<MetricFamily>& families) {
  std::ostringstream out;
  prometheus::TextSerializer().Serialize(out, families);
  return out.str();
}

}  // namespace fabtrack
