#include "collector/harness/step_plan.h"

#include <gtest/gtest.h>

namespace fabtrack::harness {
namespace {

TEST(StepPlanTest, ParameterCountsAsModelSizesAreQuoted) {
  EXPECT_EQ(ParseParameterCount("7B"), 7'000'000'000);
  EXPECT_EQ(ParseParameterCount("1.3b"), 1'300'000'000);
  EXPECT_EQ(ParseParameterCount("350M"), 350'000'000);
  EXPECT_EQ(ParseParameterCount("70e9"), 70'000'000'000);
  EXPECT_EQ(ParseParameterCount("125000000"), 125'000'000);
  for (const char* bad : {"", "B", "7X", "-1B", "0", "1e16", "nan", "7 B", "1.5.2M"}) {
    EXPECT_FALSE(ParseParameterCount(bad).has_value()) << bad;
  }
}

TEST(StepPlanTest, BucketsCutTheGradientsAndFillOverTheBackwardPass) {
  StepOptions o;
  o.model_params = 10'000'000;  // fp32: 40,000,000 bytes
  o.grad_dtype = "fp32";
  o.bucket_bytes = 25 << 20;  // 26,214,400
  o.backward_ms = 100;
  std::vector<Bucket> b = PlanBuckets(o);
  ASSERT_EQ(b.size(), 2u);
  EXPECT_EQ(b[0].bytes, 26'214'400);
  EXPECT_EQ(b[1].bytes, 40'000'000 - 26'214'400);
  EXPECT_NEAR(b[0].ready_ms, 100.0 * 26'214'400 / 40'000'000, 1e-9);
  EXPECT_DOUBLE_EQ(b[1].ready_ms, 100);  // the last bucket is ready when the backward pass ends

  o.grad_dtype = "bf16";  // half the bytes: one bucket
  b = PlanBuckets(o);
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].bytes, 20'000'000);

  o.bucket_bytes = 1001;  // an odd size: whole 2-byte elements only
  for (const Bucket& x : PlanBuckets(o)) EXPECT_EQ(x.bytes % 2, 0);
}

TEST(StepPlanTest, ValidationNamesTheFlag) {
  StepOptions o;
  EXPECT_NE(ValidateStep(o).find("--model-params"), std::string::npos);
  o.model_params = 1000;
  EXPECT_NE(ValidateStep(o).find("--backward-ms"), std::string::npos);
  o.backward_ms = 10;
  EXPECT_EQ(ValidateStep(o), "");
  o.grad_dtype = "int8";
  EXPECT_NE(ValidateStep(o).find("--grad-dtype int8"), std::string::npos);
  o.grad_dtype = "fp16";
  o.bucket_bytes = 10;
  EXPECT_NE(ValidateStep(o).find("--bucket"), std::string::npos);
  o.bucket_bytes = 1 << 20;
  o.steps = 0;
  EXPECT_NE(ValidateStep(o).find("--steps"), std::string::npos);
}

TEST(StepPlanTest, SummaryPercentilesAndIdleShare) {
  StepOptions o;
  o.model_params = 1'000'000;
  o.grad_dtype = "fp32";
  o.bucket_bytes = 1 << 20;
  o.backward_ms = 80;
  o.forward_ms = 20;
  std::vector<StepSample> samples;
  for (int i = 0; i < 10; ++i) samples.push_back({i, 100.0 + 10 * i, 100, 10.0 * i});
  StepSummary s = SummarizeSteps(o, samples);
  EXPECT_EQ(s.steps, 10);
  EXPECT_EQ(s.grad_bytes, 4'000'000);
  EXPECT_EQ(s.buckets, 4);  // 3 of 1 MiB and the rest
  EXPECT_DOUBLE_EQ(s.step_ms_p50, 145);
  EXPECT_DOUBLE_EQ(s.step_ms_max, 190);
  EXPECT_NEAR(s.step_ms_p99, 189.1, 1e-9);
  EXPECT_DOUBLE_EQ(s.exposed_ms_p50, 45);
  EXPECT_DOUBLE_EQ(s.compute_ms_p50, 100);
  // Idle share per step: 0, 10/110, ..., 90/190; the median of ten.
  EXPECT_NEAR(s.idle_share_p50, (40.0 / 140 + 50.0 / 150) / 2, 1e-12);
  EXPECT_NEAR(LostGpuHoursPer1000Steps(45, 16), 45.0 * 1000 * 16 / 3.6e6, 1e-12);
}

}  // namespace
}  // namespace fabtrack::harness
