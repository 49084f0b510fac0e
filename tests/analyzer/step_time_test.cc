#include <gtest/gtest.h>

#include <map>
#include <string>

#include "analyzer/analyze.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/text_report.h"
#include "analyzer/run_facts.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

// One step-mode sweep in `night`: per node count, the step time p50 and the
// exposed (not hidden) communication; compute is the rest. 7B bf16, 8 GPUs
// per node, 25 MiB buckets, 200 ms backward.
void AddStepSweep(InputBuilder& b, int night,
                  const std::map<int, std::pair<double, double>>& by_nodes,
                  bool oversubscribed = false) {
  double offset = 0;
  for (const auto& [nodes, times] : by_nodes) {
    RunView& run = b.AddRun(night, nodes, offset += 60);
    run.source = "fabtrack-allreduce";
    run.backend = "nccl";
    run.collective = "ddp_step";
    run.dtype = "bf16";
    run.oversubscribed = oversubscribed;
    StepView step;
    step.run_id = run.id;
    step.model_params = 7'000'000'000;
    step.grad_dtype = "bf16";
    step.bucket_bytes = 25 << 20;
    step.forward_ms = 100;
    step.backward_ms = 200;
    step.step_ms_p50 = times.first;
    step.exposed_ms_p50 = times.second;
    step.compute_ms_p50 = times.first - times.second;
    step.step_ms_p99 = times.first * 1.05;
    step.idle_share_p50 = times.second / times.first;
    b.input().steps.push_back(step);
  }
}

std::vector<Finding> FindingsOf(InputBuilder& b) {
  return testing::DetectOnly("step_time", b.Build());
}

TEST(StepTime, FlatStepTimeIsSilent) {
  InputBuilder b;
  AddStepSweep(b, 0, {{1, {310, 10}}, {2, {320, 20}}, {4, {330, 30}}, {8, {345, 45}}});
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(StepTime, GrowthWithIdleGpusIsFlaggedAtTheNodeCountWhereItBreaks) {
  InputBuilder b;
  AddStepSweep(b, 0, {{1, {310, 10}}, {2, {330, 30}}, {4, {420, 120}}, {8, {700, 400}}});
  auto findings = FindingsOf(b);
  ASSERT_EQ(findings.size(), 1u);
  const Finding& f = findings[0];
  EXPECT_EQ(f.kind, "step_time");
  EXPECT_EQ(f.severity, Severity::kWarning);  // +35% at 4 nodes; critical from +100%
  EXPECT_EQ(f.nodes, 4);
  EXPECT_DOUBLE_EQ(*f.value, 420);
  EXPECT_DOUBLE_EQ(*f.baseline, 310);
  // 120 ms x 1000 steps x 32 GPUs = 1.07 GPU-hours.
  EXPECT_NE(f.message.find("1.07 GPU-hours per 1000 steps on 32 GPUs"), std::string::npos)
      << f.message;
  EXPECT_NE(f.message.find("7B bf16"), std::string::npos) << f.message;
  EXPECT_DOUBLE_EQ(f.evidence["step_ms_p50_by_nodes"]["8"].get<double>(), 700);
}

TEST(StepTime, DoublingIsCriticalAndGrowthWithoutIdleTimeIsNot) {
  InputBuilder critical;
  AddStepSweep(critical, 0, {{1, {300, 0}}, {2, {650, 350}}});
  auto findings = FindingsOf(critical);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].severity, Severity::kCritical);

  InputBuilder compute;  // slower, but the GPUs never wait on the network
  AddStepSweep(compute, 0, {{1, {300, 0}}, {2, {450, 5}}});
  EXPECT_TRUE(FindingsOf(compute).empty());
}

TEST(StepTime, OversubscribedRunsAreNotJudged) {
  InputBuilder b;
  AddStepSweep(b, 0, {{1, {300, 0}}, {2, {900, 600}}}, true);
  EXPECT_TRUE(FindingsOf(b).empty());
}

TEST(StepTime, ARiseAgainstHistoryIsLeftToStepRegression) {
  // One night's doubled exposed time at one node count, under max_growth:
  // not a scaling problem, so step_time is silent and step_regression (the
  // change-point detector on the same series) is the one finding.
  InputBuilder b;
  for (int night = 0; night < 8; ++night) {
    AddStepSweep(b, night, {{4, {330 + night % 3, 30 + night % 3}}});
  }
  AddStepSweep(b, 8, {{4, {360, 60}}});
  b.JudgeFrom(8);
  EXPECT_TRUE(FindingsOf(b).empty());
  auto regressions = testing::DetectOnly("step_regression", b.Build());
  ASSERT_FALSE(regressions.empty());
  EXPECT_EQ(regressions[0].kind, "step_regression");
}

TEST(StepTime, TheReportSaysWhatTheNetworkCostsEvenWithoutFindings) {
  InputBuilder b;
  AddStepSweep(b, 0, {{1, {310, 10}}, {2, {320, 20}}});
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  ASSERT_EQ(result.training.size(), 2u);
  EXPECT_EQ(result.training[1].nodes, 2);
  EXPECT_EQ(result.training[1].gpus, 16);
  EXPECT_NEAR(result.training[1].gpu_hours_per_1000_steps, 20.0 * 1000 * 16 / 3.6e6, 1e-12);
  std::string text = TextReport(result, "2026-11-01T00:00:00Z");
  EXPECT_NE(text.find("2 nodes (16 GPUs): step 320.0 ms, exposed 20.0 ms, GPUs idle 6.2%: 0.089 "
                      "GPU-hours lost per 1000 steps"),
            std::string::npos)
      << text;
  nlohmann::json json = AnalysisJson(result);
  EXPECT_EQ(json["training"].size(), 2u);
  EXPECT_EQ(json["training"][0]["family"],
            "ddp_step/7B bf16/bucket 25 MiB/fwd 100.0 ms bwd 200.0 ms/8 per node/"
            "fabtrack-allreduce:nccl");
}

}  // namespace
}  // namespace fabtrack::analyzer
