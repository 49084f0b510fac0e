// The discovery walk (smp_walk.h) on subnets held in memory: each SMP is
// answered by following its directed route cable by cable, as a subnet's
// SMAs would; the walk must find every node and cable once, ask one
// NodeInfo per cable (not one per cable end), and name a LinkUp port whose
// far node never answers.
#include "collector/fabric/smp_walk.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace fabtrack::fabric {
namespace {

struct FakeNode {
  uint64_t guid;
  int type;
  int ports;
  std::string description;
};

// Nodes and cables; every cabled port LinkUp/Active at 4x EDR, the others
// Down/Polling. `silent` nodes answer no SMP at all.
class FakeSubnet {
 public:
  int Add(uint64_t guid, int type, int ports, std::string description) {
    nodes_.push_back({guid, type, ports, std::move(description)});
    return static_cast<int>(nodes_.size()) - 1;
  }
  void Cable(int a, int pa, int b, int pb) {
    cables_[{a, pa}] = {b, pb};
    cables_[{b, pb}] = {a, pa};
  }
  void Silence(int node) { silent_.insert(node); }

  // Runs the walk to its end from `local` (port `local_port`), answering in
  // the order asked; counts the SMPs of each kind.
  FabricScan Walk(int local, int local_port) {
    SmpWalk walk;
    std::deque<SmpRequest> queue{walk.Start()};
    std::vector<SmpRequest> next;
    while (!queue.empty()) {
      SmpRequest q = queue.front();
      queue.pop_front();
      ++asked[q.kind];
      // Follow the route: out of each hop's port, in at the far end.
      int node = local, in_port = local_port;
      bool reached = true;
      for (uint8_t out : q.path) {
        auto it = cables_.find({node, out});
        if (it == cables_.end() || silent_.count(it->second.first)) {
          reached = false;
          break;
        }
        node = it->second.first;
        in_port = it->second.second;
      }
      if (!reached || silent_.count(node)) {
        walk.NoAnswer(q);
        continue;
      }
      const FakeNode& n = nodes_[node];
      switch (q.kind) {
        case SmpRequest::kNodeInfo:
          walk.OnNodeInfo(q, {n.type, n.ports, n.guid, in_port}, &next);
          break;
        case SmpRequest::kNodeDescription:
          walk.OnNodeDescription(q, n.description + std::string(64 - n.description.size(), '\0'));
          break;
        case SmpRequest::kPortInfo: {
          PortInfoAnswer a;
          const bool cabled = q.port == 0 || cables_.count({node, q.port});
          a.lid = n.type == kNodeTypeSwitch ? (q.port == 0 ? 100 + node : 0) : 100 + node;
          a.state = cabled ? 4 : 1;
          a.phys_state = cabled ? kPhysLinkUp : 2;
          a.width_active = 2;
          a.speed_active = 1;
          a.speed_ext_active = 2;
          walk.OnPortInfo(q, a, &next);
          break;
        }
      }
      for (SmpRequest& r : next) queue.push_back(std::move(r));
      next.clear();
    }
    return walk.Result([](const PortInfoAnswer& info) {
      FabricPort p;
      p.state = info.state == 4 ? "Active" : info.state == 1 ? "Down" : "NoChange";
      p.phys_state = info.phys_state == kPhysLinkUp ? "LinkUp" : "Polling";
      return p;
    });
  }

  // The cables as "desc/port-desc/port" (each once, ends sorted).
  std::set<std::string> CableNames() const {
    std::set<std::string> out;
    for (const auto& [one, other] : cables_) {
      std::string x = nodes_[one.first].description + "/" + std::to_string(one.second);
      std::string y = nodes_[other.first].description + "/" + std::to_string(other.second);
      out.insert(x < y ? x + "-" + y : y + "-" + x);
    }
    return out;
  }

  std::map<int, int> asked;

 private:
  std::vector<FakeNode> nodes_;
  std::map<std::pair<int, int>, std::pair<int, int>> cables_;
  std::set<int> silent_;
};

std::set<std::string> LinkNames(const FabricScan& scan) {
  std::set<std::string> out;
  for (const FabricLink& l : scan.links) {
    std::string x = l.a.description + "/" + std::to_string(l.a.port);
    std::string y = l.b.description + "/" + std::to_string(l.b.port);
    out.insert(x < y ? x + "-" + y : y + "-" + x);
  }
  return out;
}

// leaves x spines, `hosts` HCAs per leaf: leaf ports 1..hosts to HCAs, then
// one uplink per spine; spine port l+1 to leaf l. Returns the first HCA.
int FatTree(FakeSubnet& s, int leaves, int spines, int hosts) {
  std::vector<int> leaf, spine;
  for (int l = 0; l < leaves; ++l)
    leaf.push_back(s.Add(0x1000 + l, kNodeTypeSwitch, hosts + spines, "leaf" + std::to_string(l)));
  for (int p = 0; p < spines; ++p)
    spine.push_back(s.Add(0x2000 + p, kNodeTypeSwitch, leaves, "spine" + std::to_string(p)));
  int first = -1;
  for (int l = 0; l < leaves; ++l) {
    for (int h = 0; h < hosts; ++h) {
      int hca = s.Add(0x3000 + l * hosts + h, kNodeTypeCa, 1,
                      "node" + std::to_string(l * hosts + h) + " HCA-1");
      if (first < 0) first = hca;
      s.Cable(leaf[l], h + 1, hca, 1);
    }
    for (int p = 0; p < spines; ++p) s.Cable(leaf[l], hosts + p + 1, spine[p], l + 1);
  }
  return first;
}

TEST(SmpWalk, FindsEveryNodeAndCableOfAFatTreeOnce) {
  FakeSubnet s;
  const int local = FatTree(s, 4, 3, 2);
  FabricScan scan = s.Walk(local, 1);
  EXPECT_EQ(scan.nodes.size(), 4u + 3u + 8u);
  EXPECT_EQ(LinkNames(scan), s.CableNames());
  EXPECT_EQ(scan.links.size(), 4u * 3u + 8u);
  EXPECT_TRUE(scan.unanswered.empty());
  // Switch ports 0..N, each HCA's one port.
  EXPECT_EQ(scan.ports.size(), 4u * (2 + 3 + 1) + 3u * (4 + 1) + 8u);
  for (const FabricNode& n : scan.nodes) {
    EXPECT_FALSE(n.description.empty()) << n.guid;
    ASSERT_TRUE(n.lid) << n.description;
  }
  // A switch's ports carry its port 0 LID.
  const FabricPort* p = FindFabricPort(scan, "0x0000000000001002", 3);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->lid, FindFabricNode(scan, "0x0000000000001002")->lid);
  EXPECT_EQ(p->state, "Active");
}

TEST(SmpWalk, AsksOneNodeInfoPerCableAndNoneBack) {
  FakeSubnet s;
  const int local = FatTree(s, 4, 3, 2);
  s.Walk(local, 1);
  // One NodeInfo per cable plus the local node's own: libibnetdisc asks
  // each switch-to-switch cable from both ends (12 more here).
  EXPECT_EQ(s.asked[SmpRequest::kNodeInfo], 1 + 4 * 3 + 8);
  EXPECT_EQ(s.asked[SmpRequest::kNodeDescription], 4 + 3 + 8);
  EXPECT_EQ(s.asked[SmpRequest::kPortInfo], 4 * (2 + 3 + 1) + 3 * (4 + 1) + 8);
}

TEST(SmpWalk, NamesTheLinkUpPortWhoseNodeDoesNotAnswer) {
  FakeSubnet s;
  const int local = FatTree(s, 2, 2, 2);
  // spine1 (the fourth node added) answers nothing.
  s.Silence(3);
  FabricScan scan = s.Walk(local, 1);
  EXPECT_EQ(scan.nodes.size(), 2u + 1u + 4u);
  EXPECT_EQ(FindFabricNode(scan, "0x0000000000002001"), nullptr);
  std::set<std::pair<std::string, int>> named;
  for (const FabricUnanswered& u : scan.unanswered) {
    EXPECT_EQ(u.what, "discovery");
    named.insert({u.description, u.port.value_or(-1)});
  }
  // Each leaf's uplink to spine1 (port 2 hosts + 2nd spine = 4).
  EXPECT_EQ(named, (std::set<std::pair<std::string, int>>{{"leaf0", 4}, {"leaf1", 4}}));
}

TEST(SmpWalk, ATwoPortHcaOnTwoLeavesIsOneNodeWithBothCables) {
  FakeSubnet s;
  int leaf0 = s.Add(0x10, kNodeTypeSwitch, 3, "leaf0");
  int leaf1 = s.Add(0x11, kNodeTypeSwitch, 3, "leaf1");
  int spine = s.Add(0x20, kNodeTypeSwitch, 2, "spine");
  int local = s.Add(0x30, kNodeTypeCa, 1, "local HCA-1");
  int dual = s.Add(0x31, kNodeTypeCa, 2, "dual HCA-1");
  s.Cable(leaf0, 1, local, 1);
  s.Cable(leaf0, 2, dual, 1);
  s.Cable(leaf1, 2, dual, 2);
  s.Cable(leaf0, 3, spine, 1);
  s.Cable(leaf1, 3, spine, 2);
  FabricScan scan = s.Walk(local, 1);
  EXPECT_EQ(scan.nodes.size(), 5u);
  EXPECT_EQ(LinkNames(scan), s.CableNames());
  ASSERT_NE(FindFabricPort(scan, "0x0000000000000031", 1), nullptr);
  ASSERT_NE(FindFabricPort(scan, "0x0000000000000031", 2), nullptr);
  EXPECT_TRUE(scan.unanswered.empty());
}

TEST(SmpWalk, ALoneHcaWithNoCableIsTheWholeSubnet) {
  FakeSubnet s;
  int local = s.Add(0x30, kNodeTypeCa, 1, "alone");
  FabricScan scan = s.Walk(local, 1);
  ASSERT_EQ(scan.nodes.size(), 1u);
  EXPECT_EQ(scan.nodes[0].description, "alone");
  EXPECT_TRUE(scan.links.empty());
}

// A description cut at 64 octets inside a character, or with bytes that
// are not UTF-8: U+FFFD in their place, so that the scan's JSON can be
// written (spooled, stored); before, nlohmann threw and the scan was lost.
TEST(SmpWalk, ADescriptionThatIsNotUtf8IsMadeValid) {
  FakeSubnet s;
  int local = s.Add(0x31, kNodeTypeCa, 1, "gpu-07 \xff caf\xc3");
  FabricScan scan = s.Walk(local, 1);
  ASSERT_EQ(scan.nodes.size(), 1u);
  EXPECT_EQ(scan.nodes[0].description, "gpu-07 \xEF\xBF\xBD caf\xEF\xBF\xBD");
  EXPECT_NO_THROW(nlohmann::json(scan.nodes[0].description).dump());
}

}  // namespace
}  // namespace fabtrack::fabric
