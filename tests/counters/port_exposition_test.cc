// PortExposition renders the exporter's text directly; prometheus-cpp's
// MetricFamily model and TextSerializer are kept here as the reference: the
// same reading built as families and serialized by prometheus-cpp must say
// exactly the same thing (families, help, type, label sets, values). Also:
// families are contiguous, labels are escaped, counters above 2^53 stay
// exact, and a steady-state render allocates nothing (global operator new is
// counted here).
#include "collector/counters/port_exposition.h"

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

#include <atomic>
#include <cstdlib>
#include <map>
#include <new>
#include <set>
#include <sstream>

#include "collector/counters/sysfs_ports.h"

namespace {
std::atomic<size_t> allocations{0};
}  // namespace

// The replacements pair malloc with free; GCC cannot see that new and delete
// are both replaced and warns where it inlines them.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void* operator new(size_t size) {
  ++allocations;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace fabtrack {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;

// The reference: the exporter's mapping written once more, against
// prometheus-cpp's model (one family per metric name, in first-seen order).
class ReferenceFamilies {
 public:
  void Add(const std::string& name, const std::string& help, MetricType type,
           std::vector<ClientMetric::Label> labels, double value) {
    auto it = index_.find(name);
    if (it == index_.end()) {
      it = index_.emplace(name, families_.size()).first;
      families_.push_back(MetricFamily{name, help, type, {}});
    }
    ClientMetric m;
    m.label = std::move(labels);
    (type == MetricType::Counter ? m.counter.value : m.gauge.value) = value;
    families_[it->second].metric.push_back(std::move(m));
  }
  std::string Text() const {
    std::ostringstream out;
    prometheus::TextSerializer().Serialize(out, families_);
    return out.str();
  }

 private:
  std::vector<MetricFamily> families_;
  std::map<std::string, size_t> index_;
};

std::string ReferenceText(const HostPorts& host, const ScrapeOutcome& scrape) {
  ReferenceFamilies f;
  std::set<std::string> devices;
  for (const PortSample& p : host.ports) {
    if (devices.insert(p.device).second) {
      f.Add("node_infiniband_info",
            "Non-numeric data from /sys/class/infiniband/<device>, value is always 1.",
            MetricType::Gauge,
            {{"device", p.device},
             {"board_id", p.board_id.value_or("")},
             {"firmware_version", p.fw_version.value_or("")},
             {"hca_type", ""}},
            1);
    }
  }
  auto for_ports = [&](auto add) {
    for (const PortSample& p : host.ports)
      add(p, ClientMetric::Label{"device", p.device},
          ClientMetric::Label{"port", std::to_string(p.port)});
  };
  for_ports([&](const PortSample& p, auto device, auto port) {
    if (p.state_code)
      f.Add("node_infiniband_state_id",
            "State of the InfiniBand port (0: no change, 1: down, 2: init, 3: armed, 4: active, "
            "5: act defer)",
            MetricType::Gauge, {device, port}, *p.state_code);
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    if (p.phys_state_code)
      f.Add("node_infiniband_physical_state_id",
            "Physical state of the InfiniBand port (0: no change, 1: sleep, 2: polling, 3: "
            "disable, 4: shift, 5: link up, 6: link error recover, 7: phytest)",
            MetricType::Gauge, {device, port}, *p.phys_state_code);
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    if (p.rate_gbps)
      f.Add("node_infiniband_rate_bytes_per_second", "Maximum signal transfer rate",
            MetricType::Gauge, {device, port}, *p.rate_gbps * 1e9 / 8);
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    if (p.rcv_bytes)
      f.Add("node_infiniband_port_data_received_bytes_total",
            "Number of data octets received on all links", MetricType::Counter, {device, port},
            static_cast<double>(*p.rcv_bytes));
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    if (p.xmit_bytes)
      f.Add("node_infiniband_port_data_transmitted_bytes_total",
            "Number of data octets transmitted on all links", MetricType::Counter, {device, port},
            static_cast<double>(*p.xmit_bytes));
  });
  for (const NodeExporterCounter& c : NodeExporterCounters()) {
    for_ports([&](const PortSample& p, auto device, auto port) {
      auto it = p.counters.find(c.sysfs_file);
      if (it != p.counters.end())
        f.Add(c.metric, c.help, MetricType::Counter, {device, port},
              static_cast<double>(it->second));
    });
  }
  for_ports([&](const PortSample& p, auto device, auto port) {
    for (const auto& [name, value] : p.hw_counters)
      f.Add("fabtrack_rdma_hw_stat_total",
            "Driver hw_counters of the port (mlx5: CNP/ECN congestion, retransmits, sequence "
            "errors)",
            MetricType::Counter, {device, port, {"counter", name}}, static_cast<double>(value));
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    for (const auto& [name, value] : p.ethtool)
      f.Add("fabtrack_roce_flow_control_total",
            "RoCE netdev flow-control statistics from the ethtool ioctl (PFC pause, per priority)",
            MetricType::Counter,
            {device, port, {"netdev", p.netdev.value_or("")}, {"counter", name}},
            static_cast<double>(value));
  });
  for_ports([&](const PortSample& p, auto device, auto port) {
    for (const std::string& name : p.saturated)
      f.Add("fabtrack_rdma_saturated",
            "1 when a legacy narrow counter is stuck at its maximum (its increase is unknown)",
            MetricType::Gauge, {device, port, {"counter", name}}, 1);
  });
  f.Add("fabtrack_scrape_collector_duration_seconds", "fabtrack: Duration of a collector scrape.",
        MetricType::Gauge, {{"collector", "infiniband"}}, scrape.duration_seconds);
  f.Add("fabtrack_scrape_collector_success", "fabtrack: Whether a collector succeeded.",
        MetricType::Gauge, {{"collector", "infiniband"}}, scrape.success ? 1 : 0);
  return f.Text();
}

// What an exposition says, independent of line order and number spelling.
struct Exposition {
  std::map<std::string, std::string> help, type;
  std::map<std::string, std::map<std::string, double>> samples;  // family -> labels -> value
};

Exposition Parse(const std::string& text) {
  Exposition e;
  std::istringstream in(text);
  std::string line, current;
  std::set<std::string> closed;  // families whose block has ended
  while (std::getline(in, line)) {
    if (line.rfind("# HELP ", 0) == 0 || line.rfind("# TYPE ", 0) == 0) {
      std::string rest = line.substr(7);
      std::string name = rest.substr(0, rest.find(' '));
      (line[2] == 'H' ? e.help : e.type)[name] = rest.substr(name.size() + 1);
      if (name != current) {
        EXPECT_FALSE(closed.count(name)) << "family " << name << " split in two blocks";
        if (!current.empty()) closed.insert(current);
        current = name;
      }
      continue;
    }
    size_t brace = line.find('{');
    size_t close = line.rfind("} ");
    EXPECT_NE(brace, std::string::npos) << line;
    EXPECT_NE(close, std::string::npos) << line;
    if (brace == std::string::npos || close == std::string::npos) continue;
    std::string name = line.substr(0, brace);
    EXPECT_EQ(name, current) << "sample outside its family's block: " << line;
    std::string labels = line.substr(brace + 1, close - brace - 1);
    EXPECT_FALSE(e.samples[name].count(labels)) << "duplicate series: " << line;
    e.samples[name][labels] = std::strtod(line.c_str() + close + 2, nullptr);
  }
  return e;
}

void ExpectSameAsReference(const HostPorts& host, const std::string& what) {
  ScrapeOutcome scrape{.duration_seconds = 0.000123, .success = true};
  Exposition ours = Parse(RenderPortExposition(host, scrape));
  Exposition reference = Parse(ReferenceText(host, scrape));
  EXPECT_EQ(ours.help, reference.help) << what;
  EXPECT_EQ(ours.type, reference.type) << what;
  EXPECT_EQ(ours.samples, reference.samples) << what;
  EXPECT_GT(ours.samples.size(), 2u) << what;  // more than the scrape's own two families
}

TEST(PortExpositionTest, SaysWhatPrometheusCppSaysOnEveryFixture) {
  for (const char* fixture : {"ndr_8hca", "roce_host", "mixed_faults"}) {
    ExpectSameAsReference(ReadSysfsPorts(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + fixture),
                          fixture);
  }
}

HostPorts HandMadeHost() {
  HostPorts host;
  PortSample a;
  a.device = "mlx5_0";
  a.port = 1;
  a.state_code = 4;
  a.phys_state_code = 5;
  a.rate_gbps = 200;
  a.xmit_bytes = 4000;
  a.counters = {{"port_rcv_errors", 3}, {"symbol_error", 65535}, {"unknown_file", 9}};
  a.hw_counters = {{"np_cnp_sent", 12}};
  a.netdev = "ens1f0np0";
  a.ethtool = {{"rx_prio3_pause", 7}};
  a.saturated = {"symbol_error"};
  PortSample b = a;
  b.port = 2;
  b.rate_gbps = 12.5;  // 1.5625e9 bytes/s: a non-integral rate of a degraded lane
  b.counters = {{"VL15_dropped", 1}, {"link_downed", 0}};
  b.hw_counters.clear();
  b.saturated.clear();
  host.ports = {a, b};
  return host;
}

TEST(PortExpositionTest, SaysWhatPrometheusCppSaysOnHandMadePorts) {
  ExpectSameAsReference(HandMadeHost(), "hand-made");
}

TEST(PortExpositionTest, EscapesHostileLabelValuesAsPrometheusCppDoes) {
  HostPorts host = HandMadeHost();
  host.ports[0].device = "mlx5\"0\\x\ny";
  host.ports[0].board_id = "MT_\"quoted\"";
  host.ports[1].netdev = "eth\\0";
  ExpectSameAsReference(host, "hostile labels");
  std::string text = RenderPortExposition(host, {});
  EXPECT_NE(text.find(R"(device="mlx5\"0\\x\ny")"), std::string::npos) << text;
}

TEST(PortExpositionTest, CountersAbove2To53StayExact) {
  HostPorts host = HandMadeHost();
  host.ports[0].xmit_bytes = 18446744073709551615ull;  // a 64-bit counter just before wrap
  host.ports[0].counters["port_rcv_errors"] = 9007199254740993ull;
  std::string text = RenderPortExposition(host, {});
  EXPECT_NE(text.find("node_infiniband_port_data_transmitted_bytes_total{device=\"mlx5_0\","
                      "port=\"1\"} 18446744073709551615\n"),
            std::string::npos);
  EXPECT_NE(text.find("node_infiniband_port_errors_received_total{device=\"mlx5_0\",port=\"1\"} "
                      "9007199254740993\n"),
            std::string::npos);
}

TEST(PortExpositionTest, AbsentValuesAndFailedScrapes) {
  HostPorts host;
  PortSample bare;
  bare.device = "i40iw0";
  bare.port = 1;
  bare.state_code = 4;  // state readable, every counter N/A
  host.ports = {bare};
  std::string text = RenderPortExposition(host, {.duration_seconds = 0.5, .success = false});
  EXPECT_NE(text.find("node_infiniband_state_id{device=\"i40iw0\",port=\"1\"} 4\n"),
            std::string::npos);
  EXPECT_EQ(text.find("_total{"), std::string::npos) << "an absent counter was exported:\n" << text;
  EXPECT_EQ(text.find("# HELP node_infiniband_symbol_error_total"), std::string::npos);
  EXPECT_NE(text.find("fabtrack_scrape_collector_success{collector=\"infiniband\"} 0\n"),
            std::string::npos);
  EXPECT_NE(text.find("fabtrack_scrape_collector_duration_seconds{collector=\"infiniband\"} 0.5\n"),
            std::string::npos);
}

TEST(PortExpositionTest, SaysWhichPathTheSamplerRuns) {
  HostPorts host;
  EXPECT_EQ(RenderPortExposition(host, {}).find("fabtrack_exporter_sampler_mode"),
            std::string::npos);  // a one-shot walk has no sampler
  SamplerPlan plan;
  plan.fast = true;
  std::string text = RenderPortExposition(host, {.sampler = &plan});
  EXPECT_NE(text.find("fabtrack_exporter_sampler_mode{mode=\"fast\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("fabtrack_exporter_sampler_mode{mode=\"fallback\"} 0\n"), std::string::npos);
  plan.fast = false;
  text = RenderPortExposition(host, {.sampler = &plan});
  EXPECT_NE(text.find("fabtrack_exporter_sampler_mode{mode=\"fast\"} 0\n"), std::string::npos);
  EXPECT_NE(text.find("fabtrack_exporter_sampler_mode{mode=\"fallback\"} 1\n"), std::string::npos);
}

TEST(PortExpositionTest, SteadyStateRenderDoesNotAllocate) {
  HostPorts host = ReadSysfsPorts(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/ndr_8hca");
  for (PortSample& p : host.ports) p.xmit_bytes = 9000000000ull;
  PortExposition exposition;
  std::string first = exposition.Render(host, {.duration_seconds = 0.001});
  size_t before = allocations.load();
  for (int i = 0; i < 10; ++i) {
    host.ports[i % host.ports.size()].xmit_bytes = 1000000000ull * (i % 9 + 1);  // values move
    exposition.Render(host, {.duration_seconds = 0.001 * i});
  }
  EXPECT_EQ(allocations.load() - before, 0u);
  EXPECT_GT(first.size(), 10000u);
}

}  // namespace
}  // namespace fabtrack
