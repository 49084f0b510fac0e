#include "collector/harness/harness_options.h"

#include <gtest/gtest.h>

namespace fabtrack::harness {
namespace {

TEST(ParseSizeTest, NcclTestsSuffixes) {
  EXPECT_EQ(ParseSize("8"), 8);
  EXPECT_EQ(ParseSize("1K"), 1024);
  EXPECT_EQ(ParseSize("64m"), 64 << 20);
  EXPECT_EQ(ParseSize("2G"), int64_t{2} << 30);
  EXPECT_EQ(ParseSize(""), std::nullopt);
  EXPECT_EQ(ParseSize("1X"), std::nullopt);
  EXPECT_EQ(ParseSize("1KB"), std::nullopt);
  EXPECT_EQ(ParseSize("-1"), std::nullopt);
  EXPECT_EQ(ParseSize("99999999999999999999"), std::nullopt);
  EXPECT_EQ(ParseSize("9999999999T"), std::nullopt);  // overflows int64
}

TEST(SweepSizesTest, GeometricAndLinearLikeNcclTests) {
  HarnessOptions o;
  o.min_bytes = 8;
  o.max_bytes = 1024;
  o.step_is_factor = true;
  o.step_factor = 4;
  EXPECT_EQ(SweepSizes(o), (std::vector<int64_t>{8, 32, 128, 512}));
  o.step_is_factor = false;
  o.min_bytes = 1000;
  o.max_bytes = 3000;
  o.step_bytes = 1000;
  EXPECT_EQ(SweepSizes(o), (std::vector<int64_t>{1000, 2000, 3000}));
  // Rounded down to whole elements, at least one element.
  o.dtype = DataType::kDouble;
  o.min_bytes = 1;
  o.max_bytes = 20;
  o.step_bytes = 6;
  EXPECT_EQ(SweepSizes(o), (std::vector<int64_t>{8, 16}));
}

TEST(ValidateTest, NamesTheFlag) {
  HarnessOptions o;
  EXPECT_EQ(Validate(o, false), "");
  o.min_bytes = 4096;
  o.max_bytes = 1024;
  EXPECT_NE(Validate(o, false).find("-e 1024 is smaller than -b 4096"), std::string::npos);
  o = HarnessOptions{};
  o.min_bytes = 8;
  o.max_bytes = 1024;
  o.step_is_factor = true;
  o.step_factor = 1;
  EXPECT_NE(Validate(o, false).find("-f 1"), std::string::npos);
  o = HarnessOptions{};
  o.iters = 0;
  EXPECT_NE(Validate(o, false).find("-n 0"), std::string::npos);
  o = HarnessOptions{};
  o.backend = "nccl";
  EXPECT_NE(Validate(o, false).find("without CUDA/NCCL"), std::string::npos);
  EXPECT_EQ(Validate(o, true), "");
  o = HarnessOptions{};
  o.dtype = DataType::kHalf;
  EXPECT_NE(Validate(o, false).find("-d half"), std::string::npos);
  o.backend = "nccl";
  EXPECT_EQ(Validate(o, true), "");
  o = HarnessOptions{};
  o.backend = "gloo";
  EXPECT_NE(Validate(o, false).find("--backend gloo"), std::string::npos);
}

TEST(ValidateTest, CudaGraphsOnlyOnTheNcclBackend) {
  HarnessOptions o;
  o.timing.graph_launches = 4;
  EXPECT_NE(Validate(o, true).find("-G 4: CUDA graphs need the nccl backend"), std::string::npos);
  o.backend = "nccl";
  EXPECT_EQ(Validate(o, true), "");
  o.timing.graph_launches = -1;
  EXPECT_NE(Validate(o, true).find("-G"), std::string::npos);
}

TEST(NamesTest, RoundTrip) {
  for (auto t : {DataType::kInt8, DataType::kUint8, DataType::kInt32, DataType::kUint32,
                 DataType::kInt64, DataType::kUint64, DataType::kHalf, DataType::kBfloat16,
                 DataType::kFloat, DataType::kDouble}) {
    EXPECT_EQ(ParseDataType(DataTypeName(t)), t);
  }
  EXPECT_EQ(ParseDataType("float32"), DataType::kFloat);
  EXPECT_EQ(ParseDataType("quad"), std::nullopt);
  EXPECT_EQ(ParseReduceOp("max"), ReduceOp::kMax);
  EXPECT_EQ(ParseReduceOp("xor"), std::nullopt);
}

// nccl-tests -a: rank 0, average, min, max of the ranks' means.
TEST(CombineRankTimesTest, EveryMode) {
  const std::vector<double> means = {5.0, 3.0, 10.0, 6.0};
  EXPECT_DOUBLE_EQ(CombineRankTimes(means, RankTimeMode::kRank0), 5.0);
  EXPECT_DOUBLE_EQ(CombineRankTimes(means, RankTimeMode::kAverage), 6.0);
  EXPECT_DOUBLE_EQ(CombineRankTimes(means, RankTimeMode::kMin), 3.0);
  EXPECT_DOUBLE_EQ(CombineRankTimes(means, RankTimeMode::kMax), 10.0);
}

TEST(ValidateTest, OneDevicePerRankAndFiniteCycles) {
  HarnessOptions o;
  o.gpus_per_thread = 8;
  EXPECT_NE(Validate(o, false).find("-g 8: fabtrack-allreduce drives one device per rank"),
            std::string::npos);
  o.gpus_per_thread = 1;
  o.threads = 2;
  EXPECT_NE(Validate(o, false).find("-t 2"), std::string::npos);
  o.threads = 1;
  o.cycles = 0;
  EXPECT_NE(Validate(o, false).find("-N 0"), std::string::npos);
  o.cycles = 3;
  EXPECT_EQ(Validate(o, false), "");
}

}  // namespace
}  // namespace fabtrack::harness
