// topology_odd_node: the fleet diff as an analyzer finding, so the odd node
// is a problem in `analyze`, the report, the textfile and the alerts.
#include <gtest/gtest.h>

#include "analyzer/analyze.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

NodeTopology Rails() {
  NodeTopology t;
  for (int i = 0; i < 8; ++i) {
    TopoGpu g;
    g.name = "GPU" + std::to_string(i);
    g.nic = "mlx5_" + std::to_string(i);
    g.path = TopoPath::kPix;
    t.gpus.push_back(g);
    t.nics.push_back(TopoNic{.name = g.nic});
  }
  return t;
}

TEST(TopologyOddNode, TheOddNodeIsAProblemOfTheAnalysis) {
  testing::InputBuilder b;
  RunView& run = b.AddRun(0, 2);
  b.AddResult(run, 8, 20, 0.1);
  b.JudgeFrom(0);
  for (int i = 1; i <= 16; ++i) b.input().fleet_topologies["node" + std::to_string(i)] = Rails();
  b.input().fleet_topologies["node7"].gpus[2].path = TopoPath::kSys;
  AnalysisResult r = Analyze(b.Build(), AnalyzerConfig{});
  std::vector<const Finding*> odd;
  for (const Finding& f : r.findings) {
    if (f.kind == "topology_odd_node") odd.push_back(&f);
  }
  ASSERT_EQ(odd.size(), 1u);
  EXPECT_EQ(odd[0]->severity, Severity::kCritical);
  EXPECT_EQ(odd[0]->subject, "node7 GPU2");
  EXPECT_EQ(odd[0]->host, "node7");
  EXPECT_EQ(odd[0]->device, "mlx5_2");
  EXPECT_EQ(odd[0]->message, "node7: GPU2 -> mlx5_2 is SYS, 15 other nodes PIX");
  bool problem = false;
  for (const Problem& p : r.problems) problem |= p.kind == "topology_odd_node";
  EXPECT_TRUE(problem);
  // A fleet wired alike says nothing.
  b.input().fleet_topologies["node7"] = Rails();
  for (const Finding& f : Analyze(b.Build(), AnalyzerConfig{}).findings) {
    EXPECT_NE(f.kind, "topology_odd_node") << f.message;
  }
}

}  // namespace
}  // namespace fabtrack::analyzer
