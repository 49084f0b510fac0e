// "What changed" behind a regression (issue 21 item 4): a scripted history in
// which NCCL is upgraded on night 30 (and busbw falls) and one NCCL setting
// changes on night 45 (and small-message latency rises). Each regression's
// finding names exactly its own change, nothing else.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "analyzer/analyze.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

// One run's 30 sizes (8 B .. 4 GiB) of an all-reduce over `nodes` x 8 ranks:
// time = latency + size at `peak` busbw, each term with 1% noise.
void AddSizes(InputBuilder& b, const RunView& run, int nodes, double peak, double latency,
              std::mt19937_64& rng) {
  std::normal_distribution<double> noise(1, 0.01);
  const double ranks = nodes * 8.0, factor = 2 * (ranks - 1) / ranks;
  for (int i = 0; i < 30; ++i) {
    const int64_t size = int64_t{8} << i;
    const double t = latency * noise(rng) + size / (peak / factor * 1e3) * noise(rng);
    b.AddResult(run, size, t, size / t / 1e3 * factor);
  }
}

// The last finding of `kind` at warning or above, or null.
const Finding* LastWarning(const AnalysisResult& result, const std::string& kind) {
  const Finding* last = nullptr;
  for (const Finding& f : result.findings) {
    if (f.kind == kind && f.severity >= Severity::kWarning) last = &f;
  }
  return last;
}

TEST(WhatChanged, NcclUpgradeAndOneSettingEachNamedInTheirOwnFinding) {
  std::mt19937_64 rng(5);
  std::normal_distribution<double> night_noise(1, 0.01);
  InputBuilder b;
  const int nodes = 16;
  for (int night = 0; night < 70; ++night) {
    RunView& run = b.AddRun(night, nodes);
    run.nccl_version = night >= 30 ? "2.28.9" : "2.27.7";
    run.cuda_version = "13.0";
    run.driver_version = "580.95.05";
    run.nccl_env_json = night >= 45
                            ? R"({"NCCL_IB_HCA": "mlx5", "NCCL_IB_QPS_PER_CONNECTION": "1"})"
                            : R"({"NCCL_IB_HCA": "mlx5", "NCCL_IB_QPS_PER_CONNECTION": "4"})";
    AddSizes(b, run, nodes, 350 * (night >= 30 ? 0.85 : 1.0) * night_noise(rng),
             42 * (night >= 45 ? 1.4 : 1.0) * night_noise(rng), rng);
  }
  b.JudgeFrom(69);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  const Finding* busbw = LastWarning(result, "busbw_regression");
  const Finding* latency = LastWarning(result, "latency_regression");
  ASSERT_NE(busbw, nullptr);
  ASSERT_NE(latency, nullptr);
  const nlohmann::json& upgrade = busbw->evidence["what_changed"];
  EXPECT_EQ(upgrade,
            nlohmann::json({{"nccl_version", {{"before", "2.27.7"}, {"after", "2.28.9"}}}}))
      << upgrade.dump();
  EXPECT_NE(busbw->message.find("NCCL 2.27.7 → 2.28.9"), std::string::npos) << busbw->message;
  const nlohmann::json& setting = latency->evidence["what_changed"];
  EXPECT_EQ(setting,
            nlohmann::json({{"nccl_env",
                             {{"NCCL_IB_QPS_PER_CONNECTION", {{"before", "4"}, {"after", "1"}}}}}}))
      << setting.dump();
  EXPECT_NE(latency->message.find("NCCL_IB_QPS_PER_CONNECTION 4 → 1"), std::string::npos)
      << latency->message;
}

// The NET plugin NCCL loaded (runs.parameters' net_plugin, from "NET/Plugin:
// Loaded net plugin ..."): an image update drops the external plugin on
// night 30 and NCCL falls back to its internal IB transport; busbw falls.
// Runs whose log said nothing of a plugin (nights 0-9) are no change.
TEST(WhatChanged, LostNetPluginIsNamed) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> night_noise(1, 0.01);
  InputBuilder b;
  for (int night = 0; night < 50; ++night) {
    RunView& run = b.AddRun(night, 8);
    if (night >= 10) run.net_plugin = night >= 30 ? "internal" : "NCCL RDMA Plugin v8";
    AddSizes(b, run, 8, 350 * (night >= 30 ? 0.8 : 1.0) * night_noise(rng), 42 * night_noise(rng),
             rng);
  }
  b.JudgeFrom(49);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  const Finding* busbw = LastWarning(result, "busbw_regression");
  ASSERT_NE(busbw, nullptr);
  EXPECT_EQ(
      busbw->evidence["what_changed"],
      nlohmann::json({{"net_plugin", {{"before", "NCCL RDMA Plugin v8"}, {"after", "internal"}}}}))
      << busbw->evidence["what_changed"].dump();
  EXPECT_NE(busbw->message.find("NET plugin NCCL RDMA Plugin v8 → internal"), std::string::npos)
      << busbw->message;
}

// The nodes' facts (runs.node_facts): HCA firmware flashed on night 30 (and
// busbw falls), a new kernel on night 45 (and small-message latency rises);
// the links and the topology stay. Runs from before facts were recorded
// (nights 0-9, '{}') are no change. Each finding names its own fact.
TEST(WhatChanged, FirmwareAndKernelEachNamedInTheirOwnFinding) {
  std::mt19937_64 rng(7);
  std::normal_distribution<double> night_noise(1, 0.01);
  InputBuilder b;
  const int nodes = 16;
  for (int night = 0; night < 70; ++night) {
    RunView& run = b.AddRun(night, nodes);
    run.nccl_version = "2.28.9";
    nlohmann::json facts = nlohmann::json::object();
    if (night >= 10) {
      facts = {{"fw_ver mlx5_0", night >= 30 ? "28.40.1000" : "28.39.1002"},
               {"link mlx5_0/1", "400 Gb/sec (4X NDR)"},
               {"kernel", night >= 45 ? "6.8.0-51-generic" : "6.8.0-45-generic"},
               {"topology", "3f9a2c"}};
    }
    run.node_facts_json = facts.dump();
    AddSizes(b, run, nodes, 350 * (night >= 30 ? 0.85 : 1.0) * night_noise(rng),
             42 * (night >= 45 ? 1.4 : 1.0) * night_noise(rng), rng);
  }
  b.JudgeFrom(69);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  const Finding* busbw = LastWarning(result, "busbw_regression");
  const Finding* latency = LastWarning(result, "latency_regression");
  ASSERT_NE(busbw, nullptr);
  ASSERT_NE(latency, nullptr);
  EXPECT_EQ(
      busbw->evidence["what_changed"],
      nlohmann::json({{"node_facts",
                       {{"fw_ver mlx5_0", {{"before", "28.39.1002"}, {"after", "28.40.1000"}}}}}}))
      << busbw->evidence["what_changed"].dump();
  EXPECT_NE(busbw->message.find("fw_ver mlx5_0 28.39.1002 → 28.40.1000"), std::string::npos)
      << busbw->message;
  EXPECT_EQ(latency->evidence["what_changed"],
            nlohmann::json(
                {{"node_facts",
                  {{"kernel", {{"before", "6.8.0-45-generic"}, {"after", "6.8.0-51-generic"}}}}}}))
      << latency->evidence["what_changed"].dump();
}

// Ranking (issue 21 item 4): on night 40 a kernel is rolled out to every
// node while only the 16-node runs' nodes get new HCA firmware, and only the
// 16-node series regresses. Both facts changed at its change point; the
// firmware changed on exactly the runs that regressed and ranks first, the
// kernel (changed on runs that did not regress too) after it.
TEST(WhatChanged, TheFactThatLinesUpWithTheRegressionAcrossTheFleetRanksFirst) {
  std::mt19937_64 rng(11);
  std::normal_distribution<double> noise(1, 0.01);
  InputBuilder b;
  for (int night = 0; night < 60; ++night) {
    for (int nodes : {4, 8, 16}) {
      RunView& run = b.AddRun(night, nodes, nodes);  // a few seconds apart
      run.nccl_version = "2.28.9";
      const bool flashed = night >= 40 && nodes == 16;
      run.node_facts_json =
          nlohmann::json({{"fw_ver mlx5_0", flashed ? "28.40.1000" : "28.39.1002"},
                          {"kernel", night >= 40 ? "6.8.0-51" : "6.8.0-45"}})
              .dump();
      AddSizes(b, run, nodes, 350 * (flashed ? 0.85 : 1.0) * noise(rng), 40, rng);
    }
  }
  b.JudgeFrom(59);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  std::vector<const Finding*> busbw;
  for (const Finding& f : result.findings) {
    if (f.kind == "busbw_regression" && f.severity >= Severity::kWarning) busbw.push_back(&f);
  }
  ASSERT_EQ(busbw.size(), 1u);
  EXPECT_NE(busbw[0]->subject.find("16 nodes"), std::string::npos) << busbw[0]->subject;
  const nlohmann::json& ranked = busbw[0]->evidence["what_changed_ranked"];
  ASSERT_EQ(ranked.size(), 2u) << busbw[0]->evidence.dump();
  EXPECT_EQ(ranked[0]["fact"], "fw_ver mlx5_0");
  EXPECT_EQ(ranked[0]["after"], "28.40.1000");
  EXPECT_DOUBLE_EQ(ranked[0]["alignment"].get<double>(), 1.0);
  EXPECT_EQ(ranked[1]["fact"], "kernel");
  // 180 runs: the 40 new-kernel runs of the 4- and 8-node series disagree.
  EXPECT_NEAR(ranked[1]["alignment"].get<double>(), 140.0 / 180.0, 1e-9);
}

}  // namespace
}  // namespace fabtrack::analyzer
