#include "collector/ingest/run_builder.h"

#include <gtest/gtest.h>

#include <fstream>

#include "collector/parse/parse_file.h"

namespace fabtrack {
namespace {

ParsedFile ParseFixture(const std::string& relative) {
  return ParsePath(std::string(FABTRACK_FIXTURE_DIR) + "/" + relative);
}

SourceFacts Facts() { return {"/data/night.txt", std::string(64, 'a'), "2026-11-30T02:00:00Z"}; }

IngestOptions Options() {
  IngestOptions o;
  o.cluster = "lab";
  return o;
}

TEST(RunBuilderTest, OneRunPerTableWithLogEvidence) {
  ParsedFile parsed = ParseFixture("cli/allreduce_2node_ib.txt");
  std::vector<RunRecord> runs = BuildRunRecords(parsed, Facts(), Options());
  ASSERT_EQ(runs.size(), 1u);
  const RunRecord& r = runs[0];
  EXPECT_EQ(r.source, "nccl-tests");
  EXPECT_EQ(r.collective, "all_reduce");
  EXPECT_EQ(r.dtype, "float");
  EXPECT_EQ(r.redop, "sum");
  EXPECT_EQ(r.ranks, 4);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.ranks_per_node, 2);
  EXPECT_EQ(r.gpus_per_node, 2);
  EXPECT_EQ(r.hosts, (std::vector<std::string>{"node-a1", "node-a2"}));
  EXPECT_EQ(r.gpu_model, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(r.network, "IB");
  EXPECT_EQ(r.gdrdma, true);
  EXPECT_EQ(r.transports, (std::vector<std::string>{"P2P/IPC", "NET/IB"}));
  EXPECT_EQ(r.results.size(), 4u);
  EXPECT_EQ(r.started_at, "2026-11-30T02:00:00Z");
  EXPECT_EQ(r.status, RunStatus::kComplete);
  EXPECT_EQ(r.iters, 20);
  EXPECT_EQ(r.parameters.at("max_bytes"), "16777216");
  EXPECT_EQ(r.channels.size(), 6u);
}

// The latency summary is derived when the run is built (the writers only
// write it): nccl-tests' i_* columns give out-of-place min/max/p99/CV and
// in-place p99/CV, CV as a ratio; a table without them leaves it empty.
TEST(RunBuilderTest, LatencySummaryFromPerIterationColumns) {
  ParsedFile parsed = ParseFixture("nccl_tests/t08_reduce_scatter_per_iteration_timestamp.txt");
  RunRecord r = BuildRunRecords(parsed, Facts(), Options()).at(0);
  ASSERT_EQ(r.results.size(), 5u);
  const LatencySummary& l = r.results[1].latency;
  EXPECT_EQ(l.min_us, 95.49);
  EXPECT_EQ(l.max_us, 119.11);
  EXPECT_EQ(l.p99_us, 116.16);
  EXPECT_NEAR(l.cv.value(), 0.034, 1e-12);
  EXPECT_EQ(l.p50_us, std::nullopt);  // not printed in text
  EXPECT_EQ(l.ip_p99_us, 115.52);
  EXPECT_NEAR(l.ip_cv.value(), 0.034, 1e-12);
  EXPECT_EQ(l.mean_us, std::nullopt);
  EXPECT_EQ(l.straggler_host, std::nullopt);

  for (const ResultRow& row :
       BuildRunRecords(ParseFixture("cli/allreduce_2node_ib.txt"), Facts(), Options())
           .at(0)
           .results) {
    EXPECT_TRUE(row.latency == LatencySummary{});
  }
  SizeRow only_cv;
  only_cv.ip = Measurement{.iter_cv_pct = 12.5};
  LatencySummary expected;
  expected.ip_cv = 0.125;
  EXPECT_TRUE(LatencyFromIterationColumns(only_cv) == expected);
}

TEST(RunBuilderTest, OptionsOverrideTimeAndNodes) {
  ParsedFile parsed = ParseFixture("cli/allreduce_2node_ib.txt");
  IngestOptions o = Options();
  o.at = "2026-01-02T03:04:05+02:00";
  o.nodes = 4;
  o.tags = {{"k", "v"}};
  RunRecord r = BuildRunRecords(parsed, Facts(), o).at(0);
  EXPECT_EQ(r.started_at, "2026-01-02T03:04:05+02:00");
  EXPECT_EQ(r.nodes, 4);
  EXPECT_EQ(r.ranks_per_node, 1);
  EXPECT_EQ(r.tags.at("k"), "v");
}

TEST(RunBuilderTest, TruncatedRunIsPartialAndFailedValidationIsFailed) {
  std::vector<RunRecord> cut = BuildRunRecords(
      ParseFixture("nccl_tests/t11_allreduce_truncated_cut_row.txt"), Facts(), Options());
  ASSERT_FALSE(cut.empty());
  EXPECT_EQ(cut[0].status, RunStatus::kPartial);
  EXPECT_FALSE(cut[0].results.empty());

  std::vector<RunRecord> failed = BuildRunRecords(
      ParseFixture("nccl_tests/t02_allgather_oldest_columns_failed.txt"), Facts(), Options());
  ASSERT_FALSE(failed.empty());
  EXPECT_EQ(failed[0].status, RunStatus::kFailed);
  EXPECT_EQ(failed[0].oob_ok, false);
}

TEST(RunBuilderTest, SeveralTablesGetDistinctIndexes) {
  std::vector<RunRecord> runs =
      BuildRunRecords(ParseFixture("nccl_tests/t12_three_tables_one_file.txt"), Facts(), Options());
  ASSERT_EQ(runs.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(runs[i].table_index, i);
    EXPECT_EQ(runs[i].content_hash, Facts().content_hash);
  }
}

TEST(RunBuilderTest, LogOnlyFileBecomesTransportEvidenceRun) {
  std::vector<RunRecord> runs = BuildRunRecords(
      ParseFixture("nccl_logs/socket_fallback_4node_nccl2.12.log"), Facts(), Options());
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].source, "nccl-log");
  EXPECT_TRUE(runs[0].results.empty());
  EXPECT_EQ(runs[0].nodes, 4);
  EXPECT_NE(std::find(runs[0].transports.begin(), runs[0].transports.end(), "NET/Socket"),
            runs[0].transports.end());
}

TEST(RunBuilderTest, NothingUsableGivesNoRuns) {
  EXPECT_TRUE(BuildRunRecords(ParseText("hello\nworld\n", "x.txt"), Facts(), Options()).empty());
}

TEST(InferCollectiveTest, FromRowShape) {
  auto table = [](int ranks, int64_t size, int64_t count, std::optional<std::string> redop,
                  std::optional<int> root) {
    TestTable t;
    t.ranks = ranks;
    SizeRow r;
    r.size_bytes = size;
    r.count = count;
    r.type = "float";
    r.redop = redop;
    r.root = root;
    t.rows = {r};
    return t;
  };
  EXPECT_EQ(InferCollective(table(8, 4096, 1024, "sum", -1)), "all_reduce");
  EXPECT_EQ(InferCollective(table(8, 4096, 1024, "sum", std::nullopt)), "all_reduce");
  EXPECT_EQ(InferCollective(table(12, 48, 1, std::nullopt, std::nullopt)), "all_gather");
  EXPECT_EQ(InferCollective(table(8, 4096, 128, "sum", -1)), "reduce_scatter");
  EXPECT_EQ(InferCollective(table(8, 4096, 1024, std::nullopt, 0)), "broadcast");
  EXPECT_EQ(InferCollective(table(8, 4096, 1024, "sum", 0)), "reduce");
  EXPECT_EQ(InferCollective(table(8, 4096, 7, "sum", -1)), std::nullopt);  // neither shape
  EXPECT_EQ(InferCollective(table(1, 4096, 1024, std::nullopt, std::nullopt)), std::nullopt);
  TestTable unknown_type = table(8, 4096, 1024, "sum", -1);
  unknown_type.rows[0].type = "mystery";
  EXPECT_EQ(InferCollective(unknown_type), std::nullopt);
}

TEST(NormalizeTimestampTest, AcceptsIsoFormsAndRejectsJunk) {
  EXPECT_EQ(NormalizeTimestamp("2026-12-01"), "2026-12-01T00:00:00Z");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00Z"), "2026-12-01T02:00:00Z");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01 02:00"), "2026-12-01T02:00:00Z");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00.250+05:30"), "2026-12-01T02:00:00.250+05:30");
  EXPECT_EQ(NormalizeTimestamp("yesterday"), std::nullopt);
  EXPECT_EQ(NormalizeTimestamp("2026-13-01"), std::nullopt);
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T25:00:00Z"), std::nullopt);
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00Z; DROP TABLE runs"), std::nullopt);
}

}  // namespace
}  // namespace fabtrack
