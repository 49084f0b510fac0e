#include "core/port_sample_json.h"

#include <gtest/gtest.h>

#include "collector/counters/sysfs_ports.h"

namespace fabtrack {
namespace {

// What a node prints is what the sweep stores: every field survives the trip.
TEST(PortSampleJsonTest, EveryFixtureRoundTrips) {
  for (const char* tree : {"ndr_8hca", "roce_host", "mixed_faults"}) {
    HostPorts host = ReadSysfsPorts(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + tree);
    host.host = "node07";
    host.kernel_release = "6.8.0-45-generic";
    ASSERT_FALSE(host.ports.empty()) << tree;
    host.ports[0].ethtool = {{"rx_prio3_pause", 12}};
    std::string why;
    std::optional<HostPorts> back =
        HostPortsFromJson(nlohmann::json::parse(HostPortsToJson(host).dump()), &why);
    ASSERT_TRUE(back) << tree << ": " << why;
    EXPECT_EQ(*back, host) << tree;
  }
}

TEST(PortSampleJsonTest, MissingFieldsAreReported) {
  std::string why;
  EXPECT_FALSE(HostPortsFromJson(nlohmann::json::parse(R"({"ports": []})"), &why));
  EXPECT_NE(why.find("host"), std::string::npos) << why;
  EXPECT_FALSE(HostPortsFromJson(
      nlohmann::json::parse(R"({"host": "n1", "ports": [{"device": "mlx5_0"}]})"), &why));
  EXPECT_NE(why.find("port"), std::string::npos) << why;
}

}  // namespace
}  // namespace fabtrack
