// The fabric detectors on hand-built scans: each fault named with both ends
// of its cable, nothing on a clean window.
#include <gtest/gtest.h>

#include "analyzer/fabric/fabric_window.h"
#include "tests/subnet/subnet_test_scans.h"

namespace fabtrack {
namespace {

using fabric_analysis::JudgeFabric;
using testing::PortOf;
using testing::SmallFatTree;

constexpr int kLeaf1 = 0x1001, kLeaf2 = 0x1002, kSpine1 = 0x2001, kSpine2 = 0x2002;

FabricScan Later() { return SmallFatTree(2, 2, 2, "2026-12-05T10:00:10Z"); }

std::vector<std::string> Kinds(const std::vector<Finding>& f) {
  std::vector<std::string> out;
  for (const Finding& x : f) out.push_back(x.kind);
  return out;
}

TEST(FabricDetectors, CleanWindowFlagsNothing) {
  FabricScan before = SmallFatTree(), after = Later();
  EXPECT_TRUE(JudgeFabric(&before, after).empty());
  EXPECT_TRUE(JudgeFabric(nullptr, after).empty());
}

TEST(FabricDetectors, SymbolErrorsNameBothEndsOfTheUplink) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(after, kSpine2, 1).counters["symbol_error"] = 17;  // leaf01/4 <-> spine02/1
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_symbol_errors"});
  EXPECT_EQ(f[0].subject, "leaf01/4 <-> spine02/1");
  EXPECT_EQ(f[0].value, 17);
  EXPECT_EQ(f[0].evidence["deltas"]["b"]["symbol_error"], 17);
  EXPECT_EQ(f[0].evidence["a"]["description"], "leaf01");
  EXPECT_EQ(f[0].evidence["b"]["description"], "spine02");
  EXPECT_NE(f[0].message.find("symbol_error +17 at spine02/1"), std::string::npos) << f[0].message;
}

TEST(FabricDetectors, AnErrorCountSeenBeforeTheWindowIsNotFlaggedAgain) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(before, kLeaf1, 3).counters["symbol_error"] = 40;
  PortOf(after, kLeaf1, 3).counters["symbol_error"] = 40;
  EXPECT_TRUE(JudgeFabric(&before, after).empty());
}

TEST(FabricDetectors, ACounterResetCountsFromZero) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(before, kLeaf1, 3).counters["port_xmit_discards"] = 900;
  PortOf(after, kLeaf1, 3).counters["port_xmit_discards"] = 4;  // cleared, then 4 more
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_discards"});
  EXPECT_EQ(f[0].value, 4);
}

TEST(FabricDetectors, RcvErrorsOnAHostLink) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(after, 0x3003, 1).counters["port_rcv_errors"] = 9;  // node3 on leaf02 port 1
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_rcv_errors"});
  EXPECT_EQ(f[0].subject, "leaf02/1 <-> node3/1");
}

TEST(FabricDetectors, XmitWaitOnAnUplinkAboveTheRate) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(after, kLeaf2, 3).counters["port_xmit_wait"] = 50000;   // 5000/s over 10 s
  PortOf(after, 0x3001, 1).counters["port_xmit_wait"] = 900000;  // a host link: not judged here
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_congestion"});
  EXPECT_EQ(f[0].subject, "leaf02/3 <-> spine01/2");
  EXPECT_DOUBLE_EQ(*f[0].value, 5000);
  fabric_analysis::FabricThresholds lenient;
  lenient.xmit_wait_per_second = 6000;
  EXPECT_TRUE(JudgeFabric(&before, after, lenient).empty());
}

TEST(FabricDetectors, ACableGoneIsDown) {
  FabricScan before = SmallFatTree(), after = Later();
  std::erase_if(after.links,
                [](const FabricLink& l) { return LinkName(l) == "leaf02/4 <-> spine02/2"; });
  PortOf(after, kLeaf2, 4).state = "Down";
  PortOf(after, kLeaf2, 4).phys_state = "Polling";
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_link_down"});
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[0].subject, "leaf02/4 <-> spine02/2");
  EXPECT_NE(f[0].message.find("leaf02/4 Down/Polling"), std::string::npos) << f[0].message;
}

TEST(FabricDetectors, LinkDownedGrowingOnALiveCableIsFlapping) {
  FabricScan before = SmallFatTree(), after = Later();
  PortOf(after, kSpine1, 1).counters["link_downed"] = 2;
  std::vector<Finding> f = JudgeFabric(&before, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_link_flapping"});
  EXPECT_EQ(f[0].subject, "leaf01/3 <-> spine01/1");
}

TEST(FabricDetectors, AnUplinkBelowItsTiersRateWithoutAPreviousScan) {
  FabricScan after = Later();
  for (FabricPort* p : {&PortOf(after, kLeaf1, 4), &PortOf(after, kSpine2, 1)}) {
    p->width = 1;
    p->rate_gbps = 25;
  }
  std::vector<Finding> f = JudgeFabric(nullptr, after);
  ASSERT_EQ(Kinds(f), std::vector<std::string>{"fabric_link_degraded"});
  EXPECT_EQ(f[0].subject, "leaf01/4 <-> spine02/1");
  EXPECT_EQ(f[0].baseline, 100);
  EXPECT_NE(f[0].message.find("1xEDR"), std::string::npos) << f[0].message;
}

TEST(FabricDetectors, WhatDidNotAnswerIsAFinding) {
  FabricScan after = Later();
  after.unanswered.push_back({testing::Guid(kSpine2), "spine02", std::nullopt, "ClassPortInfo",
                              "no answer after 3 tries (300 ms each)"});
  after.unanswered.push_back({testing::Guid(kLeaf1), "leaf01", 2, "PortCounters", "no answer"});
  std::vector<Finding> f = JudgeFabric(nullptr, after);
  ASSERT_EQ(f.size(), 2u);
  EXPECT_EQ(f[0].subject, "spine02");
  EXPECT_EQ(f[0].severity, Severity::kCritical);
  EXPECT_EQ(f[1].subject, "leaf01");
  EXPECT_EQ(f[1].severity, Severity::kWarning);
}

}  // namespace
}  // namespace fabtrack
