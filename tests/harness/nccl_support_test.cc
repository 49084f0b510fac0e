#include "collector/harness/nccl_support.h"

#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabtrack::harness {
namespace {

TEST(NcclSupportTest, MapsEveryDataTypeToNcclCodes) {
  const std::vector<std::pair<DataType, int>> cases = {
      {DataType::kInt8, 0},    {DataType::kUint8, 1}, {DataType::kInt32, 2},
      {DataType::kUint32, 3},  {DataType::kInt64, 4}, {DataType::kUint64, 5},
      {DataType::kHalf, 6},    {DataType::kFloat, 7}, {DataType::kDouble, 8},
      {DataType::kBfloat16, 9}};
  for (const auto& [type, code] : cases) {
    EXPECT_EQ(static_cast<int>(ToNcclTypeCode(type)), code) << DataTypeName(type);
  }
}

TEST(NcclSupportTest, MapsEveryReductionToNcclCodes) {
  const std::vector<std::pair<ReduceOp, int>> cases = {{ReduceOp::kSum, 0},
                                                       {ReduceOp::kProd, 1},
                                                       {ReduceOp::kMax, 2},
                                                       {ReduceOp::kMin, 3},
                                                       {ReduceOp::kAvg, 4}};
  for (const auto& [op, code] : cases) {
    EXPECT_EQ(static_cast<int>(ToNcclOpCode(op)), code) << ReduceOpName(op);
  }
}

TEST(NcclSupportTest, FormatsNcclVersionCodesOfBothEras) {
  EXPECT_EQ(FormatNcclVersion(22809), "2.28.9");
  EXPECT_EQ(FormatNcclVersion(22803), "2.28.3");
  EXPECT_EQ(FormatNcclVersion(21903), "2.19.3");
  EXPECT_EQ(FormatNcclVersion(20900), "2.9.0");
  EXPECT_EQ(FormatNcclVersion(2804), "2.8.4");  // before 2.9: MAJOR*1000
  EXPECT_EQ(FormatNcclVersion(2406), "2.4.6");
}

TEST(NcclSupportTest, FormatsCudaVersionCodes) {
  EXPECT_EQ(FormatCudaVersion(13000), "13.0");
  EXPECT_EQ(FormatCudaVersion(12080), "12.8");
  EXPECT_EQ(FormatCudaVersion(11040), "11.4");
}

TEST(NcclSupportTest, FormatsBusIdLikeNcclTests) {
  EXPECT_EQ(FormatBusId(0, 0x1b, 0), "0000:1b:00");
  EXPECT_EQ(FormatBusId(0, 0xdb, 0), "0000:db:00");
  EXPECT_EQ(FormatBusId(0x10, 0x3, 0x1f), "0010:03:1f");
}

TEST(NcclSupportTest, ComparesExactlyUnlessTolerant) {
  EXPECT_TRUE(ValueMatches(3.0, 3.0, false));
  EXPECT_FALSE(ValueMatches(3.001, 3.0, false));
  EXPECT_TRUE(ValueMatches(1.0 / 3.0 + 1e-3, 1.0 / 3.0, true));
  EXPECT_FALSE(ValueMatches(0.35, 1.0 / 3.0, true));
  EXPECT_TRUE(ValueMatches(0.0, 0.0, true));
  EXPECT_FALSE(ValueMatches(1e-6, 0.0, true));
  EXPECT_FALSE(ValueMatches(0.0 / 0.0, 1.0, true));
}

TEST(NcclSupportTest, ToleratesOnlyFloatingAverages) {
  EXPECT_TRUE(NeedsTolerance(DataType::kHalf, ReduceOp::kAvg));
  EXPECT_TRUE(NeedsTolerance(DataType::kBfloat16, ReduceOp::kAvg));
  EXPECT_TRUE(NeedsTolerance(DataType::kFloat, ReduceOp::kAvg));
  EXPECT_TRUE(NeedsTolerance(DataType::kDouble, ReduceOp::kAvg));
  EXPECT_FALSE(NeedsTolerance(DataType::kInt32, ReduceOp::kAvg));
  EXPECT_FALSE(NeedsTolerance(DataType::kHalf, ReduceOp::kSum));
  EXPECT_FALSE(NeedsTolerance(DataType::kFloat, ReduceOp::kMax));
}

EnvLookup FakeEnv(std::map<std::string, std::string> vars) {
  return [vars](const std::string& name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

using Settings = std::vector<std::pair<std::string, std::string>>;

TEST(NcclSupportTest, CapturesDebugLogPerRankWhenNothingIsSet) {
  EXPECT_EQ(NcclDebugSettings(FakeEnv({}), "/tmp/fabtrack-nccl-abc", 3),
            (Settings{{"NCCL_DEBUG", "INFO"},
                      {"NCCL_DEBUG_SUBSYS", "INIT,NET"},
                      {"NCCL_DEBUG_FILE", "/tmp/fabtrack-nccl-abc/nccl-debug-rank3.log"}}));
}

TEST(NcclSupportTest, KeepsTheUsersDebugLevelAndSubsystems) {
  EXPECT_EQ(
      NcclDebugSettings(FakeEnv({{"NCCL_DEBUG", "WARN"}, {"NCCL_DEBUG_SUBSYS", "ALL"}}), "/d", 0),
      (Settings{{"NCCL_DEBUG_FILE", "/d/nccl-debug-rank0.log"}}));
}

TEST(NcclSupportTest, LeavesEverythingAloneWhenTheUserChoseADebugFile) {
  EXPECT_TRUE(
      NcclDebugSettings(FakeEnv({{"NCCL_DEBUG_FILE", "/logs/nccl.%h.%p"}}), "/d", 1).empty());
}

TEST(NcclSupportTest, PicksTmpdirUnlessUnsetEmptyOrExpandedByNccl) {
  EXPECT_EQ(DebugTempBase(FakeEnv({{"TMPDIR", "/scratch/job7"}})), "/scratch/job7");
  EXPECT_EQ(DebugTempBase(FakeEnv({})), "/tmp");
  EXPECT_EQ(DebugTempBase(FakeEnv({{"TMPDIR", ""}})), "/tmp");
  EXPECT_EQ(DebugTempBase(FakeEnv({{"TMPDIR", "/scratch/%h"}})), "/tmp");
}

}  // namespace
}  // namespace fabtrack::harness
