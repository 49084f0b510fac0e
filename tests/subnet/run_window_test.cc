// A run's share of two subnet scans (`sweep --fabric-scan`): its hosts found
// by the HCAs' node descriptions, its leaves' cables cut out of each scan,
// what moved on them, the window's JSON, and an uplink that errored during a
// run cited in the run's other findings.
#include "collector/fabric/run_window.h"

#include <gtest/gtest.h>

#include "analyzer/fabric/fabric_window.h"
#include "analyzer/fabric/run_uplinks.h"
#include "core/run_fabric_window.h"
#include "tests/subnet/subnet_test_scans.h"

namespace fabtrack {
namespace {

using testing::Guid;
using testing::PortOf;
using testing::SmallFatTree;

// Leaf l's GUID is 0x1000 + l, spine s's 0x2000 + s, host n's 0x3000 + n;
// hosts 1-2 hang on leaf01, 3-4 on leaf02; leaf port 3 goes to spine01.
FabricScan Named(FabricScan scan) {
  for (FabricNode& n : scan.nodes) {
    if (n.description == "node1") n.description = "node1 HCA-1";
    if (n.description == "node2") n.description = "node2.cluster.example mlx5_0";
  }
  for (FabricLink& l : scan.links) {
    for (FabricLinkEnd* e : {&l.a, &l.b}) {
      if (e->description == "node1") e->description = "node1 HCA-1";
      if (e->description == "node2") e->description = "node2.cluster.example mlx5_0";
    }
  }
  return scan;
}

TEST(RunWindowTest, DescribedHostIsTheFirstWord) {
  EXPECT_EQ(fabric::DescribedHost("node12 HCA-1"), "node12");
  EXPECT_EQ(fabric::DescribedHost("  node12 mlx5_0"), "node12");
  EXPECT_EQ(fabric::DescribedHost("node12"), "node12");
  EXPECT_EQ(fabric::DescribedHost(""), "");
  EXPECT_TRUE(fabric::SameHost("node2", "node2.cluster.example"));
  EXPECT_TRUE(fabric::SameHost("node2.cluster.example", "node2"));
  EXPECT_FALSE(fabric::SameHost("node2.a", "node2.b"));
  EXPECT_FALSE(fabric::SameHost("node2", "node20"));
}

TEST(RunWindowTest, CutsTheRunsLeavesCablesAndNamesUnmappedHosts) {
  const FabricScan before = Named(SmallFatTree());
  FabricScan after = Named(SmallFatTree(2, 2, 2, "2026-12-05T10:01:00Z"));
  PortOf(after, 0x1001, 3).counters["symbol_error"] = 17;   // leaf01 -> spine01
  PortOf(after, 0x1002, 3).counters["symbol_error"] = 99;   // leaf02's: not the run's
  PortOf(after, 0x1001, 1).counters["port_xmit_data"] = 5;  // to node1

  RunFabricWindow w = fabric::CutRunFabricWindow(before, after, {"node1", "node2", "gpu7"});
  EXPECT_EQ(w.hosts.at("node1"), std::vector<std::string>{Guid(0x3001)});
  EXPECT_EQ(w.hosts.at("node2"), std::vector<std::string>{Guid(0x3002)});
  EXPECT_EQ(w.unmapped_hosts, std::vector<std::string>{"gpu7"});
  EXPECT_EQ(w.leaves, std::vector<std::string>{"leaf01"});
  // leaf01's two host cables and two uplinks, both ends.
  EXPECT_EQ(w.before.links.size(), 4u);
  EXPECT_EQ(w.after.links.size(), 4u);
  for (const FabricLink& l : w.after.links) EXPECT_EQ(l.a.description, "leaf01") << LinkName(l);
  EXPECT_NE(FindFabricPort(w.after, Guid(0x2001), 1), nullptr);  // spine01's end
  EXPECT_EQ(FindFabricPort(w.after, Guid(0x1002), 3), nullptr);  // leaf02 is out
  EXPECT_EQ(w.after.nodes.size(), 5u);                           // leaf01, 2 spines, 2 hosts

  std::vector<FabricLinkDelta> deltas = RunFabricLinkDeltas(w);
  ASSERT_EQ(deltas.size(), 4u);
  int uplinks = 0;
  for (const FabricLinkDelta& d : deltas) {
    uplinks += d.uplink;
    if (d.link.a.port == 3) {
      EXPECT_TRUE(d.uplink);
      EXPECT_EQ(d.a, (std::map<std::string, uint64_t>{{"symbol_error", 17}}));
      EXPECT_TRUE(d.b.empty());
    } else if (d.link.a.port == 1) {
      EXPECT_FALSE(d.uplink);
    } else {
      EXPECT_TRUE(d.a.empty() && d.b.empty()) << LinkName(d.link);
    }
  }
  EXPECT_EQ(uplinks, 2);
  nlohmann::json moved = FabricLinkDeltasToJson(deltas);
  ASSERT_EQ(moved.size(), 1u);  // only the uplink: port_xmit_data has no "before" value
  EXPECT_EQ(moved[0]["link"], "leaf01/3 <-> spine01/1");
  EXPECT_EQ(moved[0]["a"]["deltas"]["symbol_error"], 17);
  EXPECT_FALSE(IsFabricTroubleCounter("port_xmit_data"));
  EXPECT_TRUE(IsFabricTroubleCounter("port_xmit_wait"));

  // The window's JSON reads back whole.
  std::string why;
  std::optional<RunFabricWindow> back = RunFabricWindowFromJson(RunFabricWindowToJson(w), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, w);
  EXPECT_FALSE(RunFabricWindowFromJson(nlohmann::json{{"after", 1}}, &why));
  EXPECT_EQ(why, "before: missing");
}

TEST(RunWindowTest, NoMappedHostNoCables) {
  const FabricScan scan = Named(SmallFatTree());
  RunFabricWindow w = fabric::CutRunFabricWindow(scan, scan, {"elsewhere"});
  EXPECT_TRUE(w.hosts.empty());
  EXPECT_EQ(w.unmapped_hosts, std::vector<std::string>{"elsewhere"});
  EXPECT_TRUE(w.after.links.empty());
}

TEST(RunWindowTest, TheRunsUplinkIsCitedInItsOtherFindings) {
  const FabricScan before = Named(SmallFatTree());
  FabricScan after = Named(SmallFatTree(2, 2, 2, "2026-12-05T10:01:00Z"));
  PortOf(after, 0x1001, 4).counters["symbol_error"] = 17;  // leaf01/4 -> spine02/1
  RunFabricWindow w = fabric::CutRunFabricWindow(before, after, {"node1"});
  std::vector<Finding> findings = fabric_analysis::JudgeFabric(&w.before, w.after);
  ASSERT_EQ(findings.size(), 1u);
  findings[0].run_id = 7;
  findings[0].evidence["window"] = nlohmann::json::object();
  Finding regression;
  regression.kind = "busbw_regression";
  regression.run_id = 7;
  regression.message = "busbw fell";
  Finding other_run = regression;
  other_run.run_id = 8;
  findings.push_back(regression);
  findings.push_back(other_run);

  fabric_analysis::CiteRunUplinks(&findings);
  const Finding& cited = findings[1];
  ASSERT_TRUE(cited.evidence.contains("fabric_uplinks"));
  EXPECT_EQ(cited.evidence["fabric_uplinks"][0]["link"], "leaf01/4 <-> spine02/1");
  EXPECT_EQ(cited.evidence["fabric_uplinks"][0]["a"]["description"], "leaf01");
  EXPECT_EQ(cited.evidence["fabric_uplinks"][0]["b"]["description"], "spine02");
  EXPECT_NE(cited.message.find("fabric_symbol_errors on uplink leaf01/4 <-> spine02/1"),
            std::string::npos)
      << cited.message;
  EXPECT_FALSE(findings[2].evidence.contains("fabric_uplinks")) << "another run cites nothing";
  EXPECT_FALSE(findings[0].evidence.contains("fabric_uplinks")) << "the uplink's own finding";
}

// What `locate --topology SCAN` prints beside an uplink suspect.
TEST(RunWindowTest, UplinkCounterLinesOfALeaf) {
  FabricScan scan = SmallFatTree();
  PortOf(scan, 0x1001, 3).counters["symbol_error"] = 17;    // leaf01/3 -> spine01/1
  PortOf(scan, 0x2002, 1).counters["port_xmit_wait"] = 42;  // spine02/1 -> leaf01/4
  PortOf(scan, 0x1001, 3).counters["port_xmit_data"] = 9;   // traffic, not trouble
  EXPECT_EQ(fabric::UplinkCounterLines(scan, "leaf01"),
            (std::vector<std::string>{"leaf01/3 <-> spine01/1: symbol_error 17 at leaf01/3",
                                      "leaf01/4 <-> spine02/1: port_xmit_wait 42 at spine02/1"}));
  EXPECT_EQ(fabric::UplinkCounterLines(scan, "leaf02"),
            (std::vector<std::string>{"leaf02/3 <-> spine01/2: no error or wait counted",
                                      "leaf02/4 <-> spine02/2: no error or wait counted"}));
  EXPECT_TRUE(fabric::UplinkCounterLines(scan, "nowhere").empty());
}

}  // namespace
}  // namespace fabtrack
