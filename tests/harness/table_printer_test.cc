// The harness table must read back through fabtrack's own nccl-tests parser.
#include "collector/harness/table_printer.h"

#include <gtest/gtest.h>

#include "collector/parse/parse_file.h"

namespace fabtrack::harness {
namespace {

TEST(FormatCellTest, DecimalsByMagnitudeLikeNcclTests) {
  EXPECT_EQ(FormatCell(36.4712, 7), "  36.47");
  EXPECT_EQ(FormatCell(1542.04, 7), "1542.04");
  EXPECT_EQ(FormatCell(18289.4, 7), "18289.4");
  EXPECT_EQ(FormatCell(323195.2, 7), " 323195");
  EXPECT_EQ(FormatCell(237.94, 6), "237.94");
  EXPECT_EQ(FormatCell(0.0, 6), "  0.00");
  EXPECT_EQ(FormatCell(123456789.0, 7), "1.2e+08");
}

TEST(TablePrinterTest, OutputParsesAsNcclTests) {
  TestParameters p;
  p.threads = 1;
  p.gpus_per_thread = 1;
  p.min_bytes = 8;
  p.max_bytes = 1024;
  p.step_factor = 128;
  p.warmup_iters = 5;
  p.iters = 20;
  p.validation = 1;
  std::vector<RankDevice> devices = {{0, 0, 111, "node1", -1, "host", "CPU (MPI)"},
                                     {1, 0, 222, "node2", -1, "host", "CPU (MPI)"}};
  std::string text;
  for (const auto& l : HeaderLines(p, devices, "fabtrack-allreduce")) text += l + "\n";
  text += ColumnHeaderLines() + "\n";
  TableHalf oop{65.5, 0.0, 0.0, 0, 60.1, 120.7, 0.25};
  TableHalf ip{64.2, 0.0, 0.0, std::nullopt, 60.0, 110.0, 0.2};
  text += RowLine(8, 2, "float", "sum", oop, ip) + "\n";
  TableHalf big{1200.0, 0.85, 0.85, 0, 1190.0, 1500.0, 0.05};
  text += RowLine(1024, 256, "float", "sum", big, big) + "\n";
  for (const auto& l : TrailerLines(0, 0.425, "fabtrack-allreduce")) text += l + "\n";

  ParsedFile parsed = ParseText(text, "harness.txt");
  ASSERT_EQ(parsed.tests.size(), 1u) << text;
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors[0].message;
  const TestTable& t = parsed.tests[0];
  EXPECT_EQ(t.collective, "all_reduce");
  EXPECT_EQ(t.ranks, 2);
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"node1", "node2"}));
  EXPECT_TRUE(t.complete);
  EXPECT_EQ(t.oob_ok, true);
  EXPECT_DOUBLE_EQ(*t.avg_busbw, 0.425);
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0].size_bytes, 8);
  EXPECT_DOUBLE_EQ(*t.rows[0].oop->time_us, 65.5);
  EXPECT_EQ(t.rows[0].oop->wrong, 0);
  EXPECT_EQ(t.rows[0].ip->wrong, std::nullopt);  // N/A
  EXPECT_DOUBLE_EQ(*t.rows[1].ip->busbw_gbps, 0.85);
  EXPECT_EQ(t.parameters.iters, 20);
  // The trailing latency columns land on the out-of-place half.
  EXPECT_DOUBLE_EQ(*t.rows[0].oop->iter_p50_us, 60.1);
  EXPECT_DOUBLE_EQ(*t.rows[0].oop->iter_p99_us, 120.7);
  EXPECT_DOUBLE_EQ(*t.rows[0].oop->iter_cv_pct, 25.0);
  EXPECT_EQ(t.rows[0].ip->iter_p99_us, std::nullopt);
}

}  // namespace
}  // namespace fabtrack::harness
