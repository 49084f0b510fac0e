// Every collective's nccl-tests output in tests/fixtures/fake_nccl_tests/
// outputs (the H200 recordings and the tables in the image of public reports,
// README.md there): the parser puts each printed number in its column, and
// what it read agrees with nccl-tests' own arithmetic, checked two ways that
// do not share code with the parser: busbw = algbw x the collective's factor
// (core/bus_bandwidth.h, nccl-tests' GetBw), and algbw = the bytes GetBw counts
// / the printed time (src/<collective>.cu: GetCollByteCount and GetBw).
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_tests_text_parser.h"
#include "core/bus_bandwidth.h"

namespace fabtrack {
namespace {

const std::string kOutputs = std::string(FABTRACK_FIXTURE_DIR) + "/fake_nccl_tests/outputs/";

struct Parsed {
  std::vector<TestTable> tables;
  std::vector<ParseError> errors;
};

Parsed ParseOutput(const std::string& name) {
  std::ifstream in(kOutputs + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream text;
  text << in.rdbuf();
  Parsed p;
  p.tables = ParseNcclTestsText(SplitAndClean(text.str()), &p.errors);
  return p;
}

// Half a unit of the last printed digit (getFloatStr prints 2, 1 or 0
// decimals by width) on both sides of the comparison.
double PrintTolerance(double a, double b) {
  auto unit = [](double v) {
    v = std::fabs(v);
    return v < 1000 ? 0.005 : v < 10000 ? 0.05 : 0.5;
  };
  return unit(a) + unit(b) + 1e-9;
}

// The bytes nccl-tests' GetBw divides by the time, from the printed size and
// count (the count is the per-rank parameter count of GetCollByteCount).
double GetBwBytes(const std::string& collective, const SizeRow& row, int ranks) {
  if (collective == "hypercube") return static_cast<double>(*row.count) * 4 * (ranks - 1);
  return static_cast<double>(row.size_bytes);  // reduce, gather, scatter, alltoallv
}

TEST(NcclTestsCollectives, EveryOutputsBusbwIsItsCollectivesFactorTimesAlgbw) {
  int files = 0;
  std::vector<std::string> seen;
  for (const auto& entry : std::filesystem::directory_iterator(kOutputs)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".txt") continue;
    SCOPED_TRACE(name);
    ++files;
    Parsed p = ParseOutput(name);
    EXPECT_TRUE(p.errors.empty()) << p.errors.front().message << " (line " << p.errors.front().line
                                  << ")";
    ASSERT_EQ(p.tables.size(), 1u);
    const TestTable& t = p.tables[0];
    // The file is named for its collective and its MPI world size, the
    // table's ranks are every GPU (-g N in one process counts N).
    ASSERT_TRUE(t.collective.has_value());
    EXPECT_EQ(*t.collective, name.substr(0, name.find('.')));
    ASSERT_TRUE(t.ranks.has_value());
    EXPECT_TRUE(t.complete);
    EXPECT_EQ(t.oob_ok, true);
    seen.push_back(*t.collective);
    const std::optional<double> factor = BusBandwidthFactor(*t.collective, *t.ranks);
    ASSERT_TRUE(factor.has_value());
    ASSERT_GE(t.rows.size(), 9u);
    for (const SizeRow& row : t.rows) {
      for (const std::optional<Measurement>& half : {row.oop, row.ip}) {
        ASSERT_TRUE(half && half->algbw_gbps && half->busbw_gbps && half->time_us)
            << "line " << row.line;
        const double alg = *half->algbw_gbps, bus = *half->busbw_gbps;
        EXPECT_NEAR(bus, alg * *factor, PrintTolerance(bus, alg) * std::max(1.0, *factor))
            << "line " << row.line << ": busbw " << bus << ", algbw " << alg << " x " << *factor;
      }
    }
  }
  EXPECT_EQ(files, 13);  // 8 of the six recorded and two 2-rank ones, 5 below
  for (const char* c : {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast",
                        "sendrecv", "reduce", "gather", "scatter", "hypercube", "alltoallv"}) {
    EXPECT_NE(std::find(seen.begin(), seen.end(), c), seen.end()) << c << " has no output";
  }
}

struct Shape {
  std::string file, collective;
  int ranks;
  size_t rows;
  std::optional<std::string> redop;  // of every row
  int root;                          // of every row
  bool ip_checked;                   // in-place #wrong printed (else N/A)
  bool max_error;                    // the old "error" float column instead of #wrong
  int zero_size_rows;                // sizes below one 16-byte block per rank
};

// The columns that set the five apart: reduce's op and root (old layout with
// its max-error column), gather's and scatter's root 0, hypercube's blank op,
// alltoallv's unchecked in-place half; algbw from the bytes GetBw counts.
TEST(NcclTestsCollectives, RootedAndIrregularCollectivesReadColumnByColumn) {
  const Shape shapes[] = {
      {"reduce.2.txt", "reduce", 2, 25, "sum", 0, true, true, 0},
      {"gather.8.txt", "gather", 8, 13, std::nullopt, 0, true, false, 2},
      {"scatter.8.txt", "scatter", 8, 13, std::nullopt, 0, true, false, 2},
      {"hypercube.2.txt", "hypercube", 2, 25, std::nullopt, -1, true, false, 2},
      {"alltoallv.8.txt", "alltoallv", 8, 13, std::nullopt, -1, false, false, 2},
  };
  for (const Shape& s : shapes) {
    SCOPED_TRACE(s.file);
    Parsed p = ParseOutput(s.file);
    EXPECT_TRUE(p.errors.empty());
    ASSERT_EQ(p.tables.size(), 1u);
    const TestTable& t = p.tables[0];
    EXPECT_EQ(t.collective, s.collective);
    EXPECT_EQ(t.ranks, s.ranks);
    ASSERT_EQ(t.rows.size(), s.rows);
    int zero = 0;
    for (const SizeRow& row : t.rows) {
      SCOPED_TRACE("line " + std::to_string(row.line));
      EXPECT_EQ(row.type, "float");
      EXPECT_EQ(row.redop, s.redop);
      EXPECT_EQ(row.root, s.root);
      ASSERT_TRUE(row.count.has_value());
      if (row.size_bytes == 0) ++zero;
      ASSERT_TRUE(row.oop && row.ip);
      if (s.max_error) {
        EXPECT_EQ(row.oop->max_error, 0.0);
        EXPECT_FALSE(row.oop->wrong.has_value());
      } else {
        EXPECT_EQ(row.oop->wrong, 0);
        EXPECT_EQ(row.ip->wrong.has_value(), s.ip_checked);
      }
      // algbw (GB/s) = bytes / time (us) / 1e3.
      const double alg = *row.oop->algbw_gbps;
      const double expected = GetBwBytes(s.collective, row, s.ranks) / *row.oop->time_us / 1e3;
      EXPECT_NEAR(alg, expected, PrintTolerance(alg, alg) + expected * 0.001);
    }
    EXPECT_EQ(zero, s.zero_size_rows);
  }
}

// A hypercube row is one value short of its header (the op printed blank):
// the -1 is the root, the rest keep their columns; a row short of something
// else is still an error.
TEST(NcclTestsCollectives, HypercubesBlankOpIsNoOpAndOtherShortRowsStayErrors) {
  Parsed p = ParseOutput("hypercube.2.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const SizeRow& last = p.tables[0].rows.back();
  EXPECT_EQ(last.size_bytes, 134217728);
  EXPECT_EQ(last.count, 16777216);
  EXPECT_FALSE(last.redop.has_value());
  EXPECT_EQ(last.root, -1);
  ASSERT_TRUE(last.oop && last.oop->time_us);
  EXPECT_DOUBLE_EQ(*last.oop->time_us, 2877.5);
  EXPECT_DOUBLE_EQ(*last.oop->busbw_gbps, 23.32);

  // An all_reduce row that lost its op is not taken for a hypercube's.
  std::vector<ParseError> errors;
  std::vector<TestTable> tables = ParseNcclTestsText(
      SplitAndClean("# Collective test starting: all_reduce_perf\n"
                    "#       size         count      type   redop    root     time   algbw   busbw "
                    "#wrong     time   algbw   busbw #wrong\n"
                    "     1048576        262144     float      -1    28.15   37.25   65.19      "
                    "0    27.52   38.10   66.67      0\n"),
      &errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
}

}  // namespace
}  // namespace fabtrack
