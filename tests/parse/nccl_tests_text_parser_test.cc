#include "collector/parse/nccl_tests_text_parser.h"

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "collector/parse/line_cleaner.h"

namespace fabtrack {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/nccl_tests/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Parsed {
  std::vector<TestTable> tables;
  std::vector<ParseError> errors;
};

Parsed ParseText(const std::string& text) {
  Parsed p;
  p.tables = ParseNcclTestsText(SplitAndClean(text), &p.errors);
  return p;
}

Parsed ParseFixture(const std::string& name) { return ParseText(ReadFixture(name)); }

// Key facts of one row; nullopt fields are expected to be absent.
struct RowFacts {
  int line;
  int64_t size;
  std::optional<std::string> redop;
  std::optional<int> root;
  std::optional<double> oop_time;
  std::optional<double> ip_busbw;
  std::optional<int64_t> ip_wrong;
  std::optional<double> ip_max_error;
};

struct TableFacts {
  std::optional<std::string> collective;
  std::optional<int> ranks;
  std::vector<std::string> hosts;
  size_t rows;
  RowFacts first;
  RowFacts last;
  bool complete;
  std::optional<int64_t> oob_count;
  std::optional<bool> oob_ok;
  std::optional<double> avg_busbw;
};

struct Case {
  const char* fixture;
  std::vector<TableFacts> tables;
  std::vector<int> error_lines;
};

void ExpectRow(const SizeRow& r, const RowFacts& f, const std::string& where) {
  SCOPED_TRACE(where);
  EXPECT_EQ(r.line, f.line);
  EXPECT_EQ(r.size_bytes, f.size);
  EXPECT_EQ(r.redop, f.redop);
  EXPECT_EQ(r.root, f.root);
  ASSERT_TRUE(r.oop.has_value());
  ASSERT_TRUE(r.ip.has_value());
  EXPECT_EQ(r.oop->time_us, f.oop_time);
  EXPECT_EQ(r.ip->busbw_gbps, f.ip_busbw);
  EXPECT_EQ(r.ip->wrong, f.ip_wrong);
  EXPECT_EQ(r.ip->max_error, f.ip_max_error);
}

const std::vector<Case>& Cases() {
  using S = std::string;
  static const auto* cases = new std::vector<Case>{
      // 2018 header, "#   Rank  0 Pid" device lines, redop but no root, error column.
      {"t01_allreduce_2018_header_error_column.txt",
       {{std::nullopt,
         8,
         {"dgx-lab-03"},
         5,
         {16, 8, S("sum"), std::nullopt, 31.42, 0.00, std::nullopt, 0.0},
         {20, 4194312, S("sum"), std::nullopt, 379.6, 19.46, std::nullopt, 2e-07},
         true,
         0,
         true,
         14.698}},
       {}},
      // Oldest all_gather columns (neither redop nor root), size-0 rows twice,
      // non-power-of-two sizes, 1e+00 errors and FAILED; collective from the
      // "Running:" command line.
      {"t02_allgather_oldest_columns_failed.txt",
       {{S("all_gather"),
         6,
         {"hydra"},
         9,
         {15, 0, std::nullopt, std::nullopt, 41.20, 0.00, std::nullopt, 0.0},
         {23, 100663296, std::nullopt, std::nullopt, 5391.2, 18.72, std::nullopt, 1.0},
         true,
         2,
         false,
         4.39556}},
       {}},
      // Broadcast "type root" columns; -c 0 prints N/A in the error column.
      {"t03_broadcast_root_column_check_off.txt",
       {{std::nullopt,
         4,
         {"bcast-node1"},
         6,
         {12, 1024, std::nullopt, 0, 18.40, 0.06, std::nullopt, std::nullopt},
         {17, 1048576, std::nullopt, 0, 262.1, 4.04, std::nullopt, std::nullopt},
         true,
         0,
         true,
         1.7}},
       {}},
      // Reduce "redop root" columns.
      {"t04_reduce_redop_root_old_columns.txt",
       {{std::nullopt,
         2,
         {"redux-01"},
         3,
         {10, 64, S("max"), 1, 12.80, 0.01, std::nullopt, 0.0},
         {12, 65536, S("max"), 1, 41.36, 1.60, std::nullopt, 0.0},
         true,
         0,
         true,
         0.586667}},
       {}},
      // Open MPI tags, ssh warnings, NCCL INFO lines from both ranks around the rows.
      {"t05_allreduce_openmpi_tagged_info_interleaved.txt",
       {{std::nullopt,
         2,
         {"pod-worker-0", "pod-worker-1"},
         8,
         {19, 0, S("sum"), -1, 5.91, 0.00, 0, std::nullopt},
         {27, 16777216, S("sum"), -1, 16240.7, 1.03, 0, std::nullopt},
         true,
         0,
         true,
         0.33625}},
       {}},
      // Newest header: version line, test starting/concluded, unalign, PCI ids,
      // MPI help box first, NCCL version banner after the device lines.
      {"t06_allreduce_newest_16rank_pci_ids.txt",
       {{S("all_reduce"),
         16,
         {"cx-node-a", "cx-node-b"},
         8,
         {34, 1024, S("sum"), -1, 28.31, 0.07, 0, std::nullopt},
         {41, 1073741824, S("sum"), -1, 10530.2, 191.45, 0, std::nullopt},
         true,
         0,
         true,
         76.5112}},
       {}},
      // "none"/"-1" placeholders; busbw = algbw*(n-1)/n kept as printed.
      {"t07_allgather_none_placeholders_git_hash.txt",
       {{S("all_gather"),
         3,
         {"wkstn-7"},
         6,
         {13, 4096, std::nullopt, -1, 22.14, 0.12, 0, std::nullopt},
         {18, 4194300, std::nullopt, -1, 1290.6, 2.17, 0, std::nullopt},
         true,
         0,
         true,
         1.30833}},
       {}},
      // Per-iteration columns and a trailing timestamp.
      {"t08_reduce_scatter_per_iteration_timestamp.txt",
       {{S("reduce_scatter"),
         4,
         {"inf-node-12"},
         5,
         {15, 1048576, S("sum"), -1, 61.20, 12.92, 0, std::nullopt},
         {19, 16777216, S("sum"), -1, 611.4, 20.66, 0, std::nullopt},
         true,
         0,
         true,
         17.548}},
       {}},
      // "cputime" columns, N/A #wrong under -c 0, timestamp column.
      {"t09_sendrecv_cputime_check_off_timestamp.txt",
       {{S("sendrecv"),
         2,
         {"edge-a01"},
         3,
         {12, 8, S("sum"), -1, 9.84, 0.00, std::nullopt, std::nullopt},
         {14, 8192, S("sum"), -1, 14.60, 0.57, std::nullopt, std::nullopt},
         true,
         0,
         true,
         0.2}},
       {}},
      // 2/1/0 decimals, exponents, overflowing widths, glued numbers.
      {"t10_allreduce_number_formats_overflow.txt",
       {{std::nullopt,
         8,
         {"numbers-x"},
         8,
         {16, 1, S("sum"), -1, 17.25, 0.00, 0, std::nullopt},
         {23, 4194304, S("sum"), -1, 1234.56, 5.97, 0, std::nullopt},
         true,
         1000000,
         false,
         243.236}},
       {}},
      // Cut off before the trailer; the last row is cut mid-line.
      {"t11_allreduce_truncated_cut_row.txt",
       {{S("all_reduce"),
         4,
         {"slurm-gpu-17"},
         4,
         {16, 8, S("sum"), -1, 14.02, 0.00, 0, std::nullopt},
         {19, 64, S("sum"), -1, 14.33, 0.01, 0, std::nullopt},
         false,
         std::nullopt,
         std::nullopt,
         std::nullopt}},
       {20}},
      // Three tables, the first collective repeated at the end.
      {"t12_three_tables_one_file.txt",
       {{S("all_reduce"),
         2,
         {"multi-01"},
         3,
         {12, 1024, S("sum"), -1, 11.20, 0.09, 0, std::nullopt},
         {14, 1048576, S("sum"), -1, 121.6, 8.67, 0, std::nullopt},
         true,
         0,
         true,
         3.48333},
        {S("all_gather"),
         2,
         {"multi-01"},
         3,
         {32, 1024, std::nullopt, -1, 9.90, 0.05, 0, std::nullopt},
         {34, 1048576, std::nullopt, -1, 70.40, 7.50, 0, std::nullopt},
         true,
         0,
         true,
         2.88},
        {S("all_reduce"),
         2,
         {"multi-01"},
         3,
         {51, 1024, S("sum"), -1, 11.31, 0.09, 0, std::nullopt},
         {53, 1048576, S("sum"), -1, 122.0, 8.65, 0, std::nullopt},
         true,
         0,
         true,
         3.47333}},
       {}},
      // t13 (two processes' untagged lines interleaved): a test of its own
      // below, TwoProcessesInterleavedAreNotOneTable.
      // The same with Open MPI tags: one table per process, rows kept apart.
      {"t14_duplicated_headers_tagged_per_process.txt",
       {{std::nullopt,
         1,
         {"twin-host"},
         3,
         {18, 8, S("sum"), std::nullopt, 7.90, 0.00, std::nullopt, 0.0},
         {22, 8192, S("sum"), std::nullopt, 10.40, 0.00, std::nullopt, 0.0},
         true,
         0,
         true,
         0.0},
        {std::nullopt,
         1,
         {"twin-host"},
         3,
         {17, 8, S("sum"), std::nullopt, 8.10, 0.00, std::nullopt, 0.0},
         {21, 8192, S("sum"), std::nullopt, 10.62, 0.00, std::nullopt, 0.0},
         true,
         0,
         true,
         0.0}},
       {}},
      // Markdown: indentation, '#' stripped from header and trailer lines.
      {"t15_markdown_hash_stripped_indented.txt",
       {{std::nullopt,
         4,
         {"docs-node"},
         3,
         {15, 2097152, S("sum"), -1, 41.30, 76.82, 0, std::nullopt},
         {17, 33554432, S("sum"), -1, 410.9, 122.91, 0, std::nullopt},
         true,
         0,
         true,
         102.243}},
       {}},
      // Unparseable rows are reported and skipped; the table completes.
      {"t16_unparseable_rows_reported.txt",
       {{std::nullopt,
         2,
         {"bad-rows"},
         4,
         {10, 1024, S("sum"), -1, 9.50, 0.11, 0, std::nullopt},
         {17, 65536, S("sum"), -1, 30.10, 2.20, 0, std::nullopt},
         true,
         0,
         true,
         0.96}},
       {11, 13, 15, 16}},
      // No table at all: nothing, and no error.
      {"t17_no_table_only_logs.txt", {}, {}},
      // CRLF endings and srun labels stacked on Open MPI tags.
      {"t18_crlf_srun_label_stacked_prefixes.txt",
       {{std::nullopt,
         8,
         {"crlf-n0", "crlf-n1"},
         3,
         {17, 131072, S("sum"), -1, 22.40, 10.38, 0, std::nullopt},
         {19, 8388608, S("sum"), -1, 162.3, 91.29, 0, std::nullopt},
         true,
         0,
         true,
         48.7367}},
       {}},
      // 2017 format: no '#' on header/trailer, "bytes N type op ... res", time in ms.
      {"t19_2017_format_time_in_ms.txt",
       {{std::nullopt,
         2,
         {"pascal-box"},
         3,
         {9, 1048576, S("sum"), std::nullopt, 125.0, 8.46, std::nullopt, 0.0},
         {11, 4194304, S("sum"), std::nullopt, 447.0, 9.43, std::nullopt, 0.0},
         true,
         0,
         true,
         9.01667}},
       {}},
  };
  return *cases;
}

// Failure messages name the case instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture; }

class TextFixtureTest : public ::testing::TestWithParam<Case> {};

TEST_P(TextFixtureTest, KeyFacts) {
  const Case& c = GetParam();
  Parsed p = ParseFixture(c.fixture);
  ASSERT_EQ(p.tables.size(), c.tables.size());
  for (size_t i = 0; i < c.tables.size(); ++i) {
    SCOPED_TRACE("table " + std::to_string(i));
    const TestTable& t = p.tables[i];
    const TableFacts& f = c.tables[i];
    EXPECT_EQ(t.collective, f.collective);
    EXPECT_EQ(t.ranks, f.ranks);
    EXPECT_EQ(t.hosts, f.hosts);
    EXPECT_EQ(t.complete, f.complete);
    EXPECT_EQ(t.oob_count, f.oob_count);
    EXPECT_EQ(t.oob_ok, f.oob_ok);
    EXPECT_EQ(t.avg_busbw, f.avg_busbw);
    ASSERT_EQ(t.rows.size(), f.rows);
    ExpectRow(t.rows.front(), f.first, "first row");
    ExpectRow(t.rows.back(), f.last, "last row");
    EXPECT_LE(t.first_line, t.rows.front().line);
    EXPECT_GE(t.last_line, t.rows.back().line);
  }
  std::vector<int> error_lines;
  for (const ParseError& e : p.errors) error_lines.push_back(e.line);
  EXPECT_EQ(error_lines, c.error_lines);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TextFixtureTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.fixture).substr(0, 3);
                         });

// ---------------------------------------------------------------------------
// Details the case table does not cover.

TEST(NcclTestsTextParser, OldHeaderHasNoAggItersGraphOrGroup) {
  Parsed p = ParseFixture("t01_allreduce_2018_header_error_column.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  EXPECT_EQ(t.parameters.threads, 1);
  EXPECT_EQ(t.parameters.gpus_per_thread, 8);
  EXPECT_EQ(t.parameters.min_bytes, 8);
  EXPECT_EQ(t.parameters.max_bytes, 4194312);
  EXPECT_EQ(t.parameters.step_bytes, 1048576);
  EXPECT_EQ(t.parameters.step_factor, std::nullopt);
  EXPECT_EQ(t.parameters.warmup_iters, 5);
  EXPECT_EQ(t.parameters.iters, 20);
  EXPECT_EQ(t.parameters.validation, 1);
  EXPECT_EQ(t.parameters.agg_iters, std::nullopt);
  EXPECT_EQ(t.parameters.graph, std::nullopt);
  EXPECT_EQ(t.parameters.unalign, std::nullopt);
  EXPECT_EQ(t.nccl_tests_version, std::nullopt);
  ASSERT_EQ(t.devices.size(), 8u);
  EXPECT_EQ(t.devices[3].rank, 3);
  EXPECT_EQ(t.devices[3].group, std::nullopt);
  EXPECT_EQ(t.devices[3].pid, 40211);
  EXPECT_EQ(t.devices[3].device, 3);
  EXPECT_EQ(t.devices[3].bus_id, "0x3f");
  EXPECT_EQ(t.devices[3].gpu_model, "Tesla V100-SXM2-16GB");
  // The error column is a max error, not a count.
  EXPECT_EQ(t.rows[2].oop->max_error, 2e-07);
  EXPECT_EQ(t.rows[2].oop->wrong, std::nullopt);
  EXPECT_EQ(t.rows[2].count, 524290);
  EXPECT_EQ(t.rows[2].type, "float");
}

TEST(NcclTestsTextParser, NewestHeaderFieldsAndPciIds) {
  Parsed p = ParseFixture("t06_allreduce_newest_16rank_pci_ids.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  EXPECT_EQ(t.nccl_tests_version, "2.18.3");
  EXPECT_EQ(t.nccl_version_code, 22705);  // the library, not the headers (22703)
  EXPECT_EQ(t.parameters.unalign, 0);
  EXPECT_EQ(t.parameters.agg_iters, 1);
  EXPECT_EQ(t.parameters.graph, 0);
  EXPECT_EQ(t.parameters.step_factor, 8);
  EXPECT_EQ(t.parameters.step_bytes, std::nullopt);
  ASSERT_EQ(t.devices.size(), 16u);
  EXPECT_EQ(t.devices[9].group, 0);
  EXPECT_EQ(t.devices[9].host, "cx-node-b");
  EXPECT_EQ(t.devices[9].device, 1);
  EXPECT_EQ(t.devices[9].bus_id, "0000:3b:00");
  EXPECT_EQ(t.devices[9].gpu_model, "NVIDIA H100 80GB HBM3");
  // The help box and header lines come before; the concluded line ends it.
  EXPECT_EQ(t.first_line, 8);
  EXPECT_EQ(t.last_line, 45);
}

TEST(NcclTestsTextParser, VersionWithGitHash) {
  Parsed p = ParseFixture("t07_allgather_none_placeholders_git_hash.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_EQ(p.tables[0].nccl_tests_version, "2.20.1");
  EXPECT_EQ(p.tables[0].nccl_version_code, 22907);
  EXPECT_EQ(p.tables[0].parameters.graph, 1);
}

TEST(NcclTestsTextParser, PerIterationColumns) {
  Parsed p = ParseFixture("t08_reduce_scatter_per_iteration_timestamp.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const SizeRow& r = p.tables[0].rows[1];
  EXPECT_EQ(r.oop->time_us, 98.44);
  EXPECT_EQ(r.oop->algbw_gbps, 21.30);
  EXPECT_EQ(r.oop->iter_min_us, 95.49);
  EXPECT_EQ(r.oop->iter_max_us, 119.11);
  EXPECT_EQ(r.oop->iter_p99_us, 116.16);
  EXPECT_EQ(r.oop->iter_cv_pct, 3.40);
  EXPECT_EQ(r.oop->iter_p50_us, std::nullopt);  // not printed in text
  EXPECT_EQ(r.ip->time_us, 97.90);
  EXPECT_EQ(r.ip->iter_min_us, 94.96);
  EXPECT_EQ(r.ip->iter_cv_pct, 3.40);
  EXPECT_EQ(r.ip->wrong, 0);
  EXPECT_TRUE(p.errors.empty());
}

TEST(NcclTestsTextParser, NumberFormats) {
  Parsed p = ParseFixture("t10_allreduce_number_formats_overflow.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const auto& rows = p.tables[0].rows;
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[1].size_bytes, 999999);      // not a power of two
  EXPECT_EQ(rows[2].oop->time_us, 12345.6);   // one decimal
  EXPECT_EQ(rows[3].oop->time_us, 812345.0);  // no decimals
  EXPECT_EQ(rows[4].oop->time_us, 1.2e+07);   // exponent form
  EXPECT_EQ(rows[4].size_bytes, 17179869184);
  EXPECT_EQ(rows[5].size_bytes, 1099511627776);  // 13 digits, wider than the column
  EXPECT_EQ(rows[5].count, 1099511627776);
  EXPECT_EQ(rows[5].oop->busbw_gbps, 1924.1);
  EXPECT_EQ(rows[6].ip->wrong, 1000000);  // "%6g" prints 1e+06
  EXPECT_EQ(rows[6].oop->wrong, 0);
  // "1234.563.40": time and algbw glued together.
  EXPECT_EQ(rows[7].oop->time_us, 1234.56);
  EXPECT_EQ(rows[7].oop->algbw_gbps, 3.40);
  EXPECT_EQ(rows[7].oop->busbw_gbps, 5.95);
  // Same size twice: both rows kept in order.
  EXPECT_EQ(rows[6].size_bytes, rows[7].size_bytes);
  EXPECT_EQ(rows[6].line + 1, rows[7].line);
}

TEST(NcclTestsTextParser, BusbwStoredAsPrintedNeverRecomputed) {
  // Old all_gather printed busbw == algbw; 6 ranks would give 5/6 of it.
  Parsed p = ParseFixture("t02_allgather_oldest_columns_failed.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const SizeRow& r = p.tables[0].rows[7];
  EXPECT_EQ(r.oop->algbw_gbps, 15.62);
  EXPECT_EQ(r.oop->busbw_gbps, 15.62);
  EXPECT_EQ(r.redop, std::nullopt);
  EXPECT_EQ(r.root, std::nullopt);
}

TEST(NcclTestsTextParser, CheckOffLeavesWrongAbsentNotZero) {
  Parsed p = ParseFixture("t09_sendrecv_cputime_check_off_timestamp.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  for (const SizeRow& r : p.tables[0].rows) {
    EXPECT_EQ(r.oop->wrong, std::nullopt);
    EXPECT_EQ(r.ip->wrong, std::nullopt);
    EXPECT_EQ(r.ip->max_error, std::nullopt);
    EXPECT_TRUE(r.ip->time_us.has_value());  // cputime is the time column
  }
  EXPECT_EQ(p.tables[0].parameters.validation, 0);
}

TEST(NcclTestsTextParser, TruncatedRowNamesTheColumn) {
  Parsed p = ParseFixture("t11_allreduce_truncated_cut_row.txt");
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_NE(p.errors[0].message.find("algbw"), std::string::npos) << p.errors[0].message;
}

TEST(NcclTestsTextParser, UnparseableRowMessagesNameTheProblem) {
  Parsed p = ParseFixture("t16_unparseable_rows_reported.txt");
  ASSERT_EQ(p.errors.size(), 4u);
  EXPECT_NE(p.errors[0].message.find("'time'"), std::string::npos) << p.errors[0].message;
  EXPECT_NE(p.errors[1].message.find("'size'"), std::string::npos) << p.errors[1].message;
  EXPECT_NE(p.errors[2].message.find("more than"), std::string::npos) << p.errors[2].message;
  EXPECT_NE(p.errors[3].message.find("#wrong"), std::string::npos) << p.errors[3].message;
  for (const SizeRow& r : p.tables[0].rows) {
    EXPECT_NE(r.size_bytes, 2048);
    EXPECT_NE(r.size_bytes, 8192);
    EXPECT_NE(r.size_bytes, 32768);
  }
}

// Issue 30, round eight: every process of an nccl-tests binary built without
// MPI, started by mpirun, runs the test alone and prints its own header
// ("#  Rank  0 ... Pid 6101", "#  Rank  0 ... Pid 6102"); untagged, their
// lines interleave. That was one 1-rank table of both processes' rows, stored
// as a complete run; which row is whose cannot be told, so the table is
// incomplete, without rows, and an error names the row where the second
// process's rows show and both processes.
TEST(NcclTestsTextParser, TwoProcessesInterleavedAreNotOneTable) {
  Parsed p = ParseFixture("t13_duplicated_headers_untagged.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  EXPECT_FALSE(t.complete);
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.avg_busbw, std::nullopt);
  EXPECT_EQ(t.oob_ok, std::nullopt);
  ASSERT_EQ(t.devices.size(), 1u);
  EXPECT_EQ(t.devices[0].pid, 6101);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 19);  // the second "8" row
  EXPECT_NE(p.errors[0].message.find("pid 6102 on twin-host"), std::string::npos)
      << p.errors[0].message;
  EXPECT_NE(p.errors[0].message.find("pid 6101 on twin-host"), std::string::npos);
  EXPECT_NE(p.errors[0].message.find("line 9"), std::string::npos);
}

TEST(NcclTestsTextParser, TaggedProcessesKeepTheirOwnDevices) {
  Parsed p = ParseFixture("t14_duplicated_headers_tagged_per_process.txt");
  ASSERT_EQ(p.tables.size(), 2u);
  EXPECT_EQ(p.tables[0].devices[0].pid, 6101);
  EXPECT_EQ(p.tables[1].devices[0].pid, 6102);
}

TEST(NcclTestsTextParser, TimeInMillisecondsIsNormalisedToMicroseconds) {
  Parsed p = ParseFixture("t19_2017_format_time_in_ms.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_EQ(p.tables[0].rows[1].oop->time_us, 231.0);
  EXPECT_EQ(p.tables[0].devices[0].pid, std::nullopt);
}

// ---------------------------------------------------------------------------
// Small inline inputs.

constexpr const char* kHeader =
    "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 agg "
    "iters: 1 validation: 1 graph: 0\n"
    "#  Rank  0 Group  0 Pid     11 on inl device  0 [0x01] GPU\n"
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
    "time   algbw   busbw #wrong\n";

TEST(NcclTestsTextParser, EmptyInputGivesNothing) {
  Parsed p = ParseText("");
  EXPECT_TRUE(p.tables.empty());
  EXPECT_TRUE(p.errors.empty());
}

TEST(NcclTestsTextParser, NullErrorSinkIsAllowed) {
  std::string text = std::string(kHeader) + "8 2 float sum -1 x 0 0 0 1 0 0 0\n";
  auto tables = ParseNcclTestsText(SplitAndClean(text), nullptr);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_TRUE(tables[0].rows.empty());
}

TEST(NcclTestsTextParser, HeaderWithoutRowsIsAnIncompleteTable) {
  Parsed p = ParseText(kHeader);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_FALSE(p.tables[0].complete);
  EXPECT_TRUE(p.tables[0].rows.empty());
  EXPECT_EQ(p.tables[0].ranks, 1);
}

TEST(NcclTestsTextParser, RowsOutsideATableAreNotRows) {
  Parsed p = ParseText("8 2 float sum -1 1.0 0 0 0 1.0 0 0 0\n# Avg bus bandwidth : 1.0\n");
  EXPECT_TRUE(p.tables.empty());
  EXPECT_TRUE(p.errors.empty());
}

TEST(NcclTestsTextParser, OutOfRangeNumbersAreErrorsNotCrashes) {
  std::string text = std::string(kHeader) +
                     "8 99999999999999999999999 float sum -1 1 0 0 0 1 0 0 0\n"
                     "8 2 float sum 99999999999 1 0 0 0 1 0 0 0\n"
                     "8 2 float sum -1 1e999 0 0 0 1 0 0 0\n"
                     "8 2 float sum -1 1 0 0 -3 1 0 0 0\n"
                     "16 4 float sum -1 nan 0 0 0 1 0 0 0\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  ASSERT_EQ(p.errors.size(), 4u);
  EXPECT_EQ(p.errors[0].line, 4);
  EXPECT_EQ(p.errors[3].line, 7);
  ASSERT_EQ(p.tables[0].rows.size(), 1u);
  EXPECT_EQ(p.tables[0].rows[0].oop->time_us, std::nullopt);  // nan -> absent
}

TEST(NcclTestsTextParser, CutTrailerIsReported) {
  std::string text = std::string(kHeader) + "8 2 float sum -1 1 0 0 0 1 0 0 0\n# Avg bus bandwid";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_FALSE(p.tables[0].complete);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 5);
}

TEST(NcclTestsTextParser, AvgBandwidthCheckVerdictIsAccepted) {
  std::string text = std::string(kHeader) +
                     "8 2 float sum -1 1 0 0 0 1 0 0 0\n"
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.5 FAILED\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_TRUE(p.tables[0].complete);
  EXPECT_EQ(p.tables[0].avg_busbw, 12.5);
}

TEST(NcclTestsTextParser, NewHeaderAfterRowsClosesTheCutTable) {
  std::string text = std::string(kHeader) + "8 2 float sum -1 1 0 0 0 1 0 0 0\n" + kHeader +
                     "16 4 float sum -1 2 0 0 0 2 0 0 0\n"
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 2u);
  EXPECT_FALSE(p.tables[0].complete);
  ASSERT_EQ(p.tables[0].rows.size(), 1u);
  EXPECT_TRUE(p.tables[1].complete);
  ASSERT_EQ(p.tables[1].rows.size(), 1u);
  EXPECT_EQ(p.tables[1].rows[0].size_bytes, 16);
}

// Issue 30: a whole header (parameters, rank 0's device line) then NCCL's
// init, cut off before "Init COMPLETE" and before any column header: the run
// died before its first size. It is an incomplete table without rows, named
// in an error, never nothing (which stored the file as a finished log-only run).
TEST(NcclTestsTextParser, HeaderWithCutOffInitIsAnIncompleteTableWithoutRows) {
  Parsed p = ParseFixture("t20_header_ranks_cut_off_init_no_table.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  EXPECT_FALSE(t.complete);
  EXPECT_TRUE(t.rows.empty());
  EXPECT_EQ(t.collective, "all_reduce");
  EXPECT_EQ(t.ranks, 2);
  EXPECT_EQ(t.hosts, (std::vector<std::string>{"hx-node07", "hx-node08"}));
  EXPECT_EQ(t.parameters.max_bytes, 8589934592);
  EXPECT_EQ(t.first_line, 1);
  EXPECT_EQ(t.last_line, 18);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 1);
  EXPECT_NE(p.errors[0].message.find("cut off"), std::string::npos) << p.errors[0].message;
}

// The same without the parameter line (an excerpt from "# Using devices" on):
// rank 0's device line makes the header whole.
TEST(NcclTestsTextParser, DeviceListFromRankZeroWithCutOffInitIsAnIncompleteTable) {
  Parsed p = ParseText(
      "# Using devices\n"
      "#  Rank  0 Group  0 Pid   4711 on   vm-a device  0 [0000:11:00] NVIDIA H100 80GB HBM3\n"
      "#  Rank  1 Group  0 Pid   4802 on   vm-b device  0 [0000:11:00] NVIDIA H100 80GB HBM3\n"
      "vm-a:4711:4711 [0] NCCL INFO Bootstrap: Using eth0:10.0.0.1<0>\n"
      "vm-b:4802:4802 [0] NCCL INFO NCCL version 2.27.6+cuda12.9\n");
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_FALSE(p.tables[0].complete);
  EXPECT_EQ(p.tables[0].ranks, 2);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 2);
}

// Not cut-off runs: an excerpt whose device list starts at rank 1, a header
// whose init completed (an excerpt of the log), a header with no NCCL line
// after it.
TEST(NcclTestsTextParser, HeaderWithoutTableIsNoTableUnlessItsInitWasCutOff) {
  const std::string rank1 =
      "#   Rank  1 Pid 2152176 on  dgx-7 device  0 [0xd1] NVIDIA H100 80GB HBM3\n";
  const std::string init = "dgx-8:460770:460770 [0] NCCL INFO Bootstrap : Using ib0:10.1.1.8<0>\n";
  const std::string complete =
      "dgx-8:460770:460842 [0] NCCL INFO comm 0x55d1 rank 0 nranks 2 cudaDev 0 busId d1000 - Init "
      "COMPLETE\n";
  const std::string header =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 128 step: 2(factor) warmup iters: 5 iters: 20\n"
      "#  Rank  0 Pid 460770 on dgx-8 device  0 [0xd1] NVIDIA H100 80GB HBM3\n";
  for (const std::string& text : {rank1 + init, header + init + complete, header}) {
    Parsed p = ParseText(text);
    EXPECT_TRUE(p.tables.empty()) << text;
    EXPECT_TRUE(p.errors.empty()) << text;
  }
}

// A month of nights whose last one died in init: the finished tables, then
// the cut one. An "Init COMPLETE" of an earlier night does not count.
TEST(NcclTestsTextParser, LastNightCutOffInInitFollowsTheFinishedTables) {
  const std::string init =
      "n1:77:77 [0] NCCL INFO comm 0x1 rank 0 nranks 1 cudaDev 0 busId 1b000 - Init COMPLETE\n";
  std::string text = std::string(kHeader) + init + "8 2 float sum -1 1 0 0 0 1 0 0 0\n" +
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n" + kHeader;
  // The second header up to its device line only, then a cut init.
  text = text.substr(0, text.rfind('\n', text.rfind("size")) + 1);
  text += "n1:78:78 [0] NCCL INFO Bootstrap : Using ib0:10.1.1.1<0>\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 2u);
  EXPECT_TRUE(p.tables[0].complete);
  EXPECT_FALSE(p.tables[1].complete);
  EXPECT_TRUE(p.tables[1].rows.empty());
  EXPECT_EQ(p.tables[1].ranks, 1);
}

TEST(NcclTestsTextParser, RowsWithoutTheirColumnHeaderAreAnIncompleteTable) {
  // A pull request's excerpt that starts inside the table, every line behind
  // Open MPI's "[1,0]<stdout>:" tag: the rows were dropped ("no nccl-tests
  // table or NCCL log lines found").
  Parsed p = ParseFixture("t21_rows_without_header_tagged.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[0].size_bytes, 512);
  EXPECT_EQ(t.rows[4].size_bytes, 8192);
  EXPECT_EQ(t.rows[4].type, "float");
  EXPECT_FALSE(t.complete);
  EXPECT_FALSE(t.collective.has_value());
  EXPECT_EQ(t.first_line, 1);
  EXPECT_EQ(t.last_line, 5);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 1);
  EXPECT_NE(p.errors[0].message.find("without their column header"), std::string::npos);
  // A number line that is no whole row of that layout opens nothing.
  for (const char* text :
       {"2026 12 06 05 40 11 node-3 ok\n",
        "  1   1073741824  268435456  float  sum  8142.6  131.87  230.77  2e-07  "
        "8141.2  131.89  230.81  2e-07\n"}) {
    Parsed q = ParseText(text);
    EXPECT_TRUE(q.tables.empty()) << text;
    EXPECT_TRUE(q.errors.empty()) << text;
  }
}

// The 2018 layouts pasted without their header (a forum post's excerpt of
// all_gather_perf: no redop, no root, `error` columns, the last row cut):
// read as the layout whose every column the rows fill, as today's is.
TEST(NcclTestsTextParser, RowsWithoutHeaderInTheOlderLayoutsAreAnIncompleteTable) {
  Parsed p = ParseFixture("t22_rows_without_header_2018_layout.txt");
  ASSERT_EQ(p.tables.size(), 1u);
  const TestTable& t = p.tables[0];
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[0].size_bytes, 262144);
  EXPECT_EQ(t.rows[0].count.value_or(-1), 16384);
  EXPECT_EQ(t.rows[4].size_bytes, 4194304);
  ASSERT_TRUE(t.rows[4].oop.has_value());
  EXPECT_DOUBLE_EQ(t.rows[4].oop->busbw_gbps.value_or(-1), 5.34);
  ASSERT_TRUE(t.rows[4].ip.has_value());
  EXPECT_DOUBLE_EQ(t.rows[4].ip->time_us.value_or(-1), 586.0);
  EXPECT_FALSE(t.complete);
  EXPECT_EQ(t.first_line, 4);
  ASSERT_FALSE(p.errors.empty());
  EXPECT_EQ(p.errors[0].line, 4);
  EXPECT_NE(p.errors[0].message.find("without their column header"), std::string::npos);
  // With a redop and no root (12 values): the same.
  Parsed q = ParseText(
      "  1048576  262144  float  sum  301.5  3.48  3.48  0e+00  300.9  3.48  3.48  0e+00\n"
      "  2097152  524288  float  sum  590.2  3.55  3.55  0e+00  589.7  3.56  3.56  0e+00\n");
  ASSERT_EQ(q.tables.size(), 1u);
  ASSERT_EQ(q.tables[0].rows.size(), 2u);
  EXPECT_EQ(q.tables[0].rows[1].size_bytes, 2097152);
  ASSERT_TRUE(q.tables[0].rows[1].ip.has_value());
  EXPECT_DOUBLE_EQ(q.tables[0].rows[1].ip->busbw_gbps.value_or(-1), 3.56);
  // Two rows of different layouts open nothing.
  Parsed r = ParseText(
      "  1048576  262144  float  sum  301.5  3.48  3.48  0e+00  300.9  3.48  3.48  0e+00\n"
      "  2097152  524288  float  590.2  3.55  3.55  0e+00  589.7  3.56  3.56  0e+00\n");
  EXPECT_TRUE(r.tables.empty());
}

// Rows are split into tokens 16 bytes at a time: whatever the padding (runs
// of blanks and tabs of every length, tokens across every block boundary, a
// line ending at a boundary, a CR before the newline), each row reads as the
// same values as with the usual padding.
TEST(NcclTestsTextParser, RowsReadTheSameWhateverTheirPadding) {
  const std::string header =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  const std::vector<std::vector<std::string>> rows = {
      {"1024", "256", "float", "sum", "-1", "37.89", "0.03", "0.05", "0", "35.31", "0.03", "0.05",
       "0"},
      {"8589934592", "2147483648", "bfloat16", "sum", "-1", "123456.78", "69581.12", "130464.60",
       "N/A", "1.5", "7", "100000", "1e+06"},
  };
  auto text_of = [&](const std::vector<std::string>& pads) {
    std::string text = header;
    size_t pad = 0;
    for (const auto& row : rows) {
      for (const std::string& value : row) text += pads[pad++ % pads.size()] + value;
      text += pads[pad++ % pads.size()].substr(0, 1) == "\t" ? "\r\n" : "\n";
    }
    return text + "# Avg bus bandwidth    : 12.5\n";
  };
  const Parsed want = ParseText(text_of({" "}));
  ASSERT_EQ(want.tables.size(), 1u);
  ASSERT_EQ(want.tables[0].rows.size(), rows.size());
  ASSERT_TRUE(want.errors.empty());
  EXPECT_EQ(want.tables[0].rows[1].size_bytes, 8589934592);
  EXPECT_EQ(want.tables[0].rows[1].ip->wrong, 1000000);
  for (size_t width = 1; width <= 40; ++width) {
    for (const char* blank : {" ", "\t", " \t"}) {
      std::vector<std::string> pads;
      for (size_t i = 0; i < 7; ++i) {
        std::string pad;
        for (size_t j = 0; j < (width * (i + 1)) % 23 + 1; ++j)
          pad += blank[j % std::strlen(blank)];
        pads.push_back(pad);
      }
      const Parsed got = ParseText(text_of(pads));
      ASSERT_EQ(got.tables.size(), 1u) << width;
      EXPECT_TRUE(got.errors.empty()) << width;
      ASSERT_EQ(got.tables[0].rows.size(), rows.size()) << width;
      for (size_t r = 0; r < rows.size(); ++r) {
        SizeRow a = got.tables[0].rows[r], b = want.tables[0].rows[r];
        a.line = b.line = 0;
        EXPECT_EQ(a, b) << "width " << width << " row " << r;
      }
    }
  }
}

// The two headers, then the rows of one process only (the other died before
// its table, or its output went elsewhere): sizes grow, so they are that
// process's, read as before.
TEST(NcclTestsTextParser, TwoProcessHeadersOneProcessRowsAreRead) {
  const std::string header =
      "# nThread 1 nGpus 1 minBytes 8 maxBytes 16 step: 2(factor) warmup iters: 5 iters: 20 "
      "agg iters: 1 validation: 1 graph: 0\n";
  const std::string columns =
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     "
      "time   algbw   busbw #wrong\n";
  std::string text = header + header +
                     "#  Rank  0 Group  0 Pid     11 on inl device  0 [0x01] GPU\n"
                     "#  Rank  0 Group  0 Pid     12 on inl device  1 [0x02] GPU\n" +
                     columns + columns +
                     "8 2 float sum -1 1 0 0 0 1 0 0 0\n"
                     "16 4 float sum -1 1 0 0 0 1 0 0 0\n"
                     "# Out of bounds values : 0 OK\n# Avg bus bandwidth : 0\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_TRUE(p.tables[0].complete);
  EXPECT_EQ(p.tables[0].rows.size(), 2u);
  EXPECT_TRUE(p.errors.empty());
}

// The same header twice from one process (a log pasted twice) is one header.
TEST(NcclTestsTextParser, SameProcessHeaderTwiceIsOneHeader) {
  std::string text = std::string(kHeader) + kHeader + "8 2 float sum -1 1 0 0 0 1 0 0 0\n" +
                     "8 2 float sum -1 1 0 0 0 1 0 0 0\n";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_EQ(p.tables[0].rows.size(), 2u);
  EXPECT_TRUE(p.errors.empty());
}

// Issue 30, round eight: a file that ends inside a row (no newline after it)
// said nothing; the row's last value may be cut ("12" of "123.4"), so it is
// not read and the cut is said, as for an NCCL line.
TEST(NcclTestsTextParser, LastRowWithoutNewlineIsSaidAndNotRead) {
  std::string text = std::string(kHeader) + "8 2 float sum -1 1 0 0 0 1 0 0 0\n" +
                     "16 4 float sum -1 2 0 0 0 2 0 0 0";
  Parsed p = ParseText(text);
  ASSERT_EQ(p.tables.size(), 1u);
  EXPECT_FALSE(p.tables[0].complete);
  ASSERT_EQ(p.tables[0].rows.size(), 1u);
  EXPECT_EQ(p.tables[0].rows[0].size_bytes, 8);
  ASSERT_EQ(p.errors.size(), 1u);
  EXPECT_EQ(p.errors[0].line, 5);
  EXPECT_NE(p.errors[0].message.find("without a newline"), std::string::npos);
}

}  // namespace
}  // namespace fabtrack
