#include "collector/counters/verbs_ports.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

namespace fabtrack {
namespace {

TEST(VerbsCodesTest, WidthAndSpeedMatchSysfsRates) {
  EXPECT_EQ(WidthLanes(2), 4);
  EXPECT_EQ(WidthLanes(1), 1);
  EXPECT_EQ(WidthLanes(16), 2);
  EXPECT_EQ(WidthLanes(3), 0);
  EXPECT_DOUBLE_EQ(4 * SpeedGbps(128), 400.0);  // 4X NDR
  EXPECT_DOUBLE_EQ(4 * SpeedGbps(64), 200.0);   // 4X HDR
  EXPECT_DOUBLE_EQ(4 * SpeedGbps(32), 100.0);   // 4X EDR
  EXPECT_DOUBLE_EQ(SpeedGbps(1), 2.5);
}

TEST(CrossCheckTest, ReportsEveryKindOfDifference) {
  PortSample a;
  a.device = "mlx5_0";
  a.port = 1;
  a.state = "ACTIVE";
  a.link_layer = "InfiniBand";
  a.rate_gbps = 400;
  PortSample b = a;
  b.device = "mlx5_1";
  PortSample only_sysfs = a;
  only_sysfs.device = "mlx5_2";
  HostPorts sysfs{"h", {a, b, only_sysfs}, {}};
  VerbsReport verbs;
  verbs.devices = {{"mlx5_0", "28.39", {{1, "ACTIVE", "InfiniBand", 4, 100}}},
                   {"mlx5_1", "28.39", {{1, "DOWN", "InfiniBand", 4, 50}}},
                   {"mlx5_9", "28.39", {{1, "ACTIVE", "Ethernet", 4, 25}}}};
  std::vector<std::string> d = CrossCheck(sysfs, verbs);
  auto has = [&](const std::string& text) {
    return std::any_of(d.begin(), d.end(),
                       [&](const std::string& x) { return x.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has("mlx5_1/1: state ACTIVE in sysfs, DOWN in verbs"));
  EXPECT_TRUE(has("mlx5_1/1: rate 400"));
  EXPECT_TRUE(has("mlx5_2/1: in sysfs, not seen by libibverbs"));
  EXPECT_TRUE(has("mlx5_9/1: seen by libibverbs, not in sysfs"));
  EXPECT_FALSE(has("mlx5_0/1"));  // agrees
  EXPECT_EQ(d.size(), 4u);
}

// The real stack on this machine: libibverbs must list exactly the devices
// the kernel shows in /sys/class/infiniband (none on machines without HCAs).
TEST(QueryVerbsPortsTest, AgreesWithTheKernelsDeviceList) {
  VerbsReport report = QueryVerbsPorts();
  EXPECT_EQ(report.error, "");
  std::vector<std::string> kernel;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator("/sys/class/infiniband", ec)) {
    kernel.push_back(entry.path().filename().string());
  }
  std::vector<std::string> listed;
  for (const auto& d : report.devices) listed.push_back(d.name);
  std::sort(kernel.begin(), kernel.end());
  std::sort(listed.begin(), listed.end());
  EXPECT_EQ(listed, kernel);
}

}  // namespace
}  // namespace fabtrack
