#include "core/counter_deltas.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

PortSample Port(const std::string& device, std::map<std::string, uint64_t> counters,
                std::vector<std::string> saturated = {}) {
  PortSample p;
  p.device = device;
  p.port = 1;
  p.counters = std::move(counters);
  p.saturated = std::move(saturated);
  if (auto it = p.counters.find("port_xmit_data"); it != p.counters.end()) {
    p.xmit_bytes = it->second * 4;
  }
  return p;
}

const CounterDelta* Find(const PortDeltas& d, const std::string& counter) {
  for (const auto& x : d.deltas) {
    if (x.counter == counter) return &x;
  }
  return nullptr;
}

TEST(CounterDeltasTest, PlainDeltaRateAndBytes) {
  HostPorts before{"h", {Port("mlx5_0", {{"port_xmit_data", 1000}, {"symbol_error", 2}})}, {}};
  HostPorts after{"h", {Port("mlx5_0", {{"port_xmit_data", 3500}, {"symbol_error", 5}})}, {}};
  PortDeltas d = ComputeDeltas(before, after, 10.0);
  ASSERT_NE(Find(d, "symbol_error"), nullptr);
  EXPECT_EQ(Find(d, "symbol_error")->delta, 3u);
  EXPECT_DOUBLE_EQ(*Find(d, "symbol_error")->per_second, 0.3);
  EXPECT_EQ(Find(d, "xmit_bytes")->delta, 10000u);  // 2500 words x 4
  EXPECT_FALSE(Find(d, "xmit_bytes")->reset_seen);
  EXPECT_TRUE(d.unmatched_ports.empty());
}

TEST(CounterDeltasTest, HwAndEthtoolCountersArePrefixed) {
  PortSample b = Port("mlx5_0", {});
  PortSample a = b;
  b.hw_counters = {{"np_cnp_sent", 10}};
  a.hw_counters = {{"np_cnp_sent", 70}};
  b.ethtool = {{"rx_prio3_pause", 100}};
  a.ethtool = {{"rx_prio3_pause", 400}};
  PortDeltas d = ComputeDeltas(HostPorts{"h", {b}, {}}, HostPorts{"h", {a}, {}}, 2.0);
  ASSERT_NE(Find(d, "hw:np_cnp_sent"), nullptr);
  EXPECT_EQ(Find(d, "hw:np_cnp_sent")->delta, 60u);
  ASSERT_NE(Find(d, "ethtool:rx_prio3_pause"), nullptr);
  EXPECT_EQ(Find(d, "ethtool:rx_prio3_pause")->delta, 300u);
  EXPECT_DOUBLE_EQ(*Find(d, "ethtool:rx_prio3_pause")->per_second, 150.0);
}

TEST(CounterDeltasTest, ResetCountsFromZeroAndSaturationIsUnknownNotZero) {
  HostPorts before{"h", {Port("mlx5_0", {{"port_rcv_errors", 900}, {"link_downed", 255}})}, {}};
  HostPorts after{
      "h", {Port("mlx5_0", {{"port_rcv_errors", 4}, {"link_downed", 255}}, {"link_downed"})}, {}};
  PortDeltas d = ComputeDeltas(before, after, 1.0);
  const CounterDelta* reset = Find(d, "port_rcv_errors");
  EXPECT_TRUE(reset->reset_seen);
  EXPECT_EQ(reset->delta, 4u);
  const CounterDelta* stuck = Find(d, "link_downed");
  EXPECT_TRUE(stuck->saturated);
  EXPECT_EQ(stuck->delta, std::nullopt);  // not a reassuring zero
}

TEST(CounterDeltasTest, MissingCountersAndVanishedDevices) {
  HostPorts before{
      "h", {Port("mlx5_0", {{"port_xmit_wait", 7}}), Port("mlx5_1", {{"symbol_error", 0}})}, {}};
  HostPorts after{"h", {Port("mlx5_0", {}), Port("mlx5_2", {{"symbol_error", 0}})}, {}};
  PortDeltas d = ComputeDeltas(before, after, 1.0);
  // Absent after (N/A, unreadable): absent delta, never 0.
  ASSERT_NE(Find(d, "port_xmit_wait"), nullptr);
  EXPECT_EQ(Find(d, "port_xmit_wait")->delta, std::nullopt);
  EXPECT_EQ(d.unmatched_ports, (std::vector<std::string>{"mlx5_2/1", "mlx5_1/1"}));
}

}  // namespace
}  // namespace fabtrack
