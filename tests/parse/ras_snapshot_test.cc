// What `ras watch` keeps of a RAS report (collector/ras/ras_snapshot.h): the
// JSON report's every rank with its state and counts, missing ranks marked
// dead; the text report's named ranks with their group's count and the
// communicator's state from the table; hosts(5) files mapping node IPs to
// hosts, with a bad line named by file:line.
#include "collector/ras/ras_snapshot.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

namespace fabtrack::ras {
namespace {

std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/ras/" + name);
  EXPECT_TRUE(in) << name;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RasSnapshot, JsonReportKeepsEveryRankAndMarksTheDeadOne) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasJson(Fixture("missing_rank.json")));
  ASSERT_EQ(comms.size(), 1u);
  const RasCommState& c = comms[0];
  EXPECT_EQ(c.id, "0x8c41e07a2f9d3b66");
  EXPECT_EQ(c.size, 4);
  EXPECT_EQ(c.state, "RUNNING");
  EXPECT_EQ(c.errors, "DEAD,MISMATCH");
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(c.ranks[2].rank, 2);
  EXPECT_EQ(c.ranks[2].node, "10.12.0.6");
  EXPECT_EQ(c.ranks[2].pid, 38811);
  EXPECT_EQ(c.ranks[2].state, "running");
  ASSERT_EQ(c.ranks[2].op_counts.size(), 5u);
  EXPECT_EQ(c.ranks[2].op_counts[4], (std::pair<std::string, int64_t>("AllReduce", 975)));
  EXPECT_EQ(c.ranks[3].state, "dead");
  EXPECT_EQ(c.ranks[3].gpu, "1");
  EXPECT_TRUE(c.ranks[3].op_counts.empty());
  EXPECT_EQ(NodesOf(comms), std::vector<std::string>({"10.12.0.5", "10.12.0.6"}));

  std::vector<RasCommState> mapped = comms;
  MapHosts({{"10.12.0.6", "gpu-b2"}}, &mapped);
  EXPECT_EQ(mapped[0].ranks[3].host, "gpu-b2");
  EXPECT_EQ(mapped[0].ranks[0].host, "");
}

TEST(RasSnapshot, TextReportKeepsTheNamedRanksWithTheirCounts) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasText(Fixture("mismatch.txt")));
  ASSERT_EQ(comms.size(), 1u);
  const RasCommState& c = comms[0];
  EXPECT_EQ(c.id, "b41f07c2d9e38a16");
  EXPECT_EQ(c.size, 32);
  EXPECT_EQ(c.state, "RUNNING");
  EXPECT_EQ(c.errors, "MISMATCH");
  ASSERT_EQ(c.ranks.size(), 4u);
  EXPECT_EQ(c.ranks[2].rank, 13);
  EXPECT_EQ(c.ranks[2].gpu, "5 (NVML 6)");
  EXPECT_EQ(c.ranks[2].node, "192.168.20.12");
  EXPECT_EQ(c.ranks[2].op_counts,
            (std::vector<std::pair<std::string, int64_t>>{{"collective", 12039}}));
  EXPECT_EQ(c.ranks[3].rank, 27);
  EXPECT_FALSE(c.ranks[3].pid);
}

TEST(RasSnapshot, TextReportRankOfADeadProcessIsDead) {
  std::vector<RasCommState> comms = CommunicatorsOf(ParseRasText(Fixture("dead.txt")));
  ASSERT_EQ(comms.size(), 1u);
  EXPECT_EQ(comms[0].errors, "INCOMPLETE");
  ASSERT_EQ(comms[0].ranks.size(), 1u);
  EXPECT_EQ(comms[0].ranks[0].rank, 10);
  EXPECT_EQ(comms[0].ranks[0].state, "dead");
}

TEST(RasSnapshot, HostsFile) {
  HostsFile h = ParseHostsFile(
      "# the job's nodes\n10.9.0.1 gpu-n1 gpu-n1.cluster  # first\n\n10.9.0.2\tgpu-n2\n"
      "10.9.0.1 other\n10.9.0.3\n",
      "job-hosts");
  EXPECT_EQ(h.host_of,
            (std::map<std::string, std::string>{{"10.9.0.1", "gpu-n1"}, {"10.9.0.2", "gpu-n2"}}));
  EXPECT_EQ(h.problems,
            std::vector<std::string>({"job-hosts:6: address 10.9.0.3 without a host name"}));
}

}  // namespace
}  // namespace fabtrack::ras
