// The streaming parse (issue 18): however the bytes arrive, the lines and the
// parse are those of the whole text.
#include <gtest/gtest.h>

#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "collector/parse/line_splitter.h"
#include "collector/parse/parse_file.h"
#include "collector/parse/parsed_file_json.h"

namespace fabtrack {
namespace {

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/" + relative, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Line {
  std::string text;
  int number;
  bool unterminated;
  bool truncated;
  bool operator==(const Line&) const = default;
};

void PrintTo(const Line& l, std::ostream* os) {
  *os << l.number << (l.unterminated ? "u" : "") << (l.truncated ? "t" : "") << ":" << l.text;
}

std::vector<Line> Split(const std::vector<std::string_view>& chunks, size_t max_line) {
  LineSplitter splitter(max_line);
  std::vector<Line> lines;
  auto keep = [&](const RawLine& r) {
    lines.push_back({std::string(r.text), r.number, r.unterminated, r.truncated});
  };
  for (std::string_view c : chunks) splitter.Feed(c, keep);
  splitter.Finish(keep);
  return lines;
}

// A table row with CRLF, an NCCL line, a NUL byte inside a line, an empty
// line, a line longer than the limit and a last line without a newline.
using std::string_literals::operator""s;
const std::string kAwkward =
    "# nThread 1 nGpus 1\r\n"
    "        8   2   float   sum   -1   9.1  0.00  0.00  0   9.0  0.00  0.00  0\r\n"
    "host:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\n"
    "nul\0inside\n"
    "\n"
    "0123456789012345678901234567890123456789\n"
    "last line, cut"s;  // s: the NUL is part of the text

TEST(LineSplitterTest, EverySplitPointGivesTheLinesOfTheWhole) {
  const size_t max_line = 32;
  std::vector<Line> whole = Split({kAwkward}, max_line);
  ASSERT_EQ(whole.size(), 7u);
  EXPECT_EQ(whole[0].text, "# nThread 1 nGpus 1");  // CR of CRLF removed
  EXPECT_EQ(whole[3].text, std::string("nul\0inside", 10));
  EXPECT_EQ(whole[4].text, "");
  EXPECT_TRUE(whole[1].truncated);  // the row is longer than 32 bytes
  EXPECT_TRUE(whole[5].truncated);
  EXPECT_EQ(whole[5].text.size(), max_line);
  EXPECT_FALSE(whole[0].truncated);
  EXPECT_TRUE(whole[6].unterminated);
  EXPECT_EQ(whole[6].text, "last line, cut");
  EXPECT_EQ(whole[6].number, 7);

  std::string_view all = kAwkward;
  for (size_t cut = 0; cut <= all.size(); ++cut) {
    EXPECT_EQ(Split({all.substr(0, cut), all.substr(cut)}, max_line), whole) << "cut at " << cut;
  }
  for (size_t a = 0; a <= all.size(); a += 3) {
    for (size_t b = a; b <= all.size(); b += 5) {
      EXPECT_EQ(Split({all.substr(0, a), all.substr(a, b - a), all.substr(b)}, max_line), whole)
          << "cuts at " << a << ", " << b;
    }
  }
  // One byte at a time.
  std::vector<std::string_view> bytes;
  for (size_t i = 0; i < all.size(); ++i) bytes.push_back(all.substr(i, 1));
  EXPECT_EQ(Split(bytes, max_line), whole);
}

TEST(LineSplitterTest, EmptyInputAndTrailingNewline) {
  EXPECT_TRUE(Split({""}, 64).empty());
  std::vector<Line> one = Split({"a\n"}, 64);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_FALSE(one[0].unterminated);
  std::vector<Line> cr = Split({"a\r"}, 64);  // a CR without its LF is kept
  ASSERT_EQ(cr.size(), 1u);
  EXPECT_EQ(cr[0].text, "a\r");
}

std::string Parsed(const ParsedFile& p) { return ParsedFileToJson(p).dump(1); }

// The parse of real-looking files fed in two pieces, at every split point,
// equals the parse of the whole (tables, log facts, errors and their lines).
TEST(FileParserTest, EverySplitPointParsesLikeTheWhole) {
  for (const char* fixture :
       {"nccl_tests/t05_allreduce_openmpi_tagged_info_interleaved.txt",
        "nccl_tests/t18_crlf_srun_label_stacked_prefixes.txt",
        "nccl_tests/t11_allreduce_truncated_cut_row.txt", "nccl_tests/j02_allreduce_truncated.json",
        "nccl_logs/cut_last_line_p2_nccl2.19.log",
        "nccl_logs/ib_gdrdma_rank0_excerpt_nccl2.12.log"}) {
    std::string text = ReadFixture(fixture);
    ASSERT_FALSE(text.empty()) << fixture;
    std::string whole = Parsed(ParseText(text, "f"));
    std::string_view all = text;
    size_t step = all.size() > 4000 ? 7 : 1;  // keeps the test quick
    for (size_t cut = 0; cut <= all.size(); cut += step) {
      FileParser parser("f");
      parser.Feed(all.substr(0, cut));
      parser.Feed(all.substr(cut));
      ASSERT_EQ(Parsed(parser.Finish()), whole) << fixture << " cut at " << cut;
    }
  }
}

// With a sink, tables are handed over in order and not kept; the rest of the
// result is the same.
TEST(FileParserTest, TableSinkGetsEveryTableInOrder) {
  std::string text = ReadFixture("nccl_tests/t12_three_tables_one_file.txt");
  ParsedFile whole = ParseText(text, "f");
  ASSERT_EQ(whole.tests.size(), 3u);
  std::vector<TestTable> got;
  FileParser parser("f", [&](TestTable&& t) { got.push_back(std::move(t)); });
  parser.Feed(text);
  ParsedFile streamed = parser.Finish();
  EXPECT_TRUE(streamed.tests.empty());
  ASSERT_EQ(got.size(), whole.tests.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_EQ(TestTableToJson(got[i]), TestTableToJson(whole.tests[i])) << i;
  }
  streamed.tests = got;
  EXPECT_EQ(Parsed(streamed), Parsed(whole));
}

// A long file that repeats itself keeps bounded samples and says what it
// left out.
TEST(FileParserTest, RepeatedLogKeepsCappedSamples) {
  std::string one = ReadFixture("nccl_logs/ib_gdrdma_2node_p2p_read_nccl2.10.log");
  ParsedFile once = ParseText(one, "f");
  FileParser parser("f", [](TestTable&&) {});
  for (int i = 0; i < 3000; ++i) parser.Feed(one);
  ParsedFile many = parser.Finish();
  EXPECT_LE(many.log.channels.size(), 20000u + 16u);
  EXPECT_GT(many.log.dropped_channels, 0);
  EXPECT_EQ(many.Transports(), once.Transports());
  EXPECT_EQ(many.Gdrdma(), once.Gdrdma());
  EXPECT_EQ(many.log.hosts, once.log.hosts);
  EXPECT_EQ(many.log.net_devices.size(), once.log.net_devices.size());
  EXPECT_EQ(ParsedFileToJson(many)["dropped"]["channels"], many.log.dropped_channels);
}

// The rows written from precomputed text (the JSON path's fast way) are the
// bytes the general writer gives, and both are nlohmann's dump(2): every
// optional present and absent, iteration statistics, old "error" columns,
// strings that need escaping (those take the general writer), odd doubles.
TEST(TableJsonTest, RowTextMatchesWriter) {
  std::mt19937_64 random(30);
  auto chance = [&](int percent) { return static_cast<int>(random() % 100) < percent; };
  const std::vector<double> doubles = {0.0,
                                       -0.0,
                                       1.0,
                                       12.34,
                                       0.5,
                                       1e-7,
                                       2e-07,
                                       123456789012.0,
                                       1e300,
                                       5e-324,
                                       3.14159,
                                       100.0,
                                       7.25,
                                       std::numeric_limits<double>::infinity(),
                                       std::numeric_limits<double>::quiet_NaN()};
  auto some_double = [&]() -> std::optional<double> {
    if (chance(10)) return std::nullopt;
    if (chance(50)) return doubles[random() % doubles.size()];
    return static_cast<double>(random() % 100000) / 100.0;
  };
  auto some_measurement = [&]() -> std::optional<Measurement> {
    if (chance(15)) return std::nullopt;
    Measurement m;
    m.time_us = some_double();
    m.algbw_gbps = some_double();
    m.busbw_gbps = some_double();
    if (chance(70)) m.wrong = static_cast<int64_t>(random() % 5) - 1;
    if (chance(20)) m.max_error = some_double().value_or(2e-07);
    if (chance(30)) {
      m.iter_p99_us = some_double().value_or(1.5);
      m.iter_min_us = some_double();
      m.iter_max_us = some_double();
      m.iter_p50_us = some_double();
      m.iter_cv_pct = some_double();
    }
    return m;
  };
  const std::vector<std::string> words = {
      "float", "sum",       "half",        "bfloat16",           "",
      "a\"b",  "tab\there", "caf\xc3\xa9", std::string(300, 'x')};
  for (int table = 0; table < 300; ++table) {
    TestTable t;
    t.collective = "all_reduce";
    t.hosts = {"node01", "node02"};
    t.first_line = table;
    t.last_line = table + 40;
    const int rows = static_cast<int>(random() % 40);
    for (int i = 0; i < rows; ++i) {
      SizeRow r;
      r.size_bytes = static_cast<int64_t>(random() % (int64_t{1} << 40));
      if (chance(90)) r.count = static_cast<int64_t>(random() % 1000000);
      if (chance(90)) r.type = words[random() % words.size()];
      if (chance(80)) r.redop = words[random() % words.size()];
      if (chance(80)) r.root = static_cast<int>(random() % 9) - 1;
      r.oop = some_measurement();
      r.ip = some_measurement();
      t.rows.push_back(r);
    }
    // At depth 7 the iteration keys' pieces, at 20 all of a row's fixed
    // pieces, are longer than the row writer's fixed-size copy
    // (parsed_file_json.cc, kPieceSlack) and take its other path.
    for (int depth : {0, 3, 7, 20}) {
      std::string fast, general;
      AppendTestTableJson(t, depth, &fast, /*row_text=*/true);
      AppendTestTableJson(t, depth, &general, /*row_text=*/false);
      ASSERT_EQ(fast, general) << "table " << table << " depth " << depth;
    }
    std::string text;
    AppendTestTableJson(t, 0, &text);
    ASSERT_EQ(text, nlohmann::json::parse(text).dump(2, ' ', false,
                                                     nlohmann::json::error_handler_t::replace))
        << "table " << table;
  }
}

}  // namespace
}  // namespace fabtrack
