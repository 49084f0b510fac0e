#include "collector/parse/inspector_parser.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace fabtrack {
namespace {

namespace fs = std::filesystem;

const fs::path kDir = fs::path(FABTRACK_FIXTURE_DIR) / "inspector";
constexpr char kSlowHost[] = "gpu-h100-a018";
constexpr char kFastHost[] = "gpu-h100-a017";
constexpr int kSlowRank = 11;

std::string Read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<fs::path> FilesIn(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  return files;
}

std::vector<std::string> Messages(const InspectorParseResult& r) {
  std::vector<std::string> out;
  for (const InspectorError& e : r.errors) out.push_back(e.ToString());
  return out;
}

// Every file of the job, parsed as fabtrack would: by name.
std::vector<InspectorRecord> ParseAll(const fs::path& dir, size_t* files = nullptr) {
  std::vector<InspectorRecord> all;
  for (const fs::path& p : FilesIn(dir)) {
    InspectorParseResult r = ParseInspectorFile(Read(p), p.filename().string());
    EXPECT_EQ(Messages(r), std::vector<std::string>{}) << p;
    EXPECT_FALSE(r.truncated) << p;
    all.insert(all.end(), r.records.begin(), r.records.end());
    if (files) ++*files;
  }
  return all;
}

const InspectorGroupSummary* Find(const std::vector<InspectorGroupSummary>& groups,
                                  const std::string& collective, int64_t bytes) {
  for (const auto& g : groups) {
    if (g.collective == collective && g.message_bytes == bytes) return &g;
  }
  return nullptr;
}

constexpr int64_t kMiB = 1 << 20;

// ---------------------------------------------------------------------------
// JSON lines: the job's 16 per-process files.

TEST(InspectorJson, JobDirectoryAsThePluginLaysItOut) {
  size_t files = 0;
  std::vector<InspectorRecord> all = ParseAll(kDir / "nccl-inspector-48213", &files);
  EXPECT_EQ(files, 16u);
  ASSERT_EQ(all.size(), 160u);
  for (const InspectorRecord& r : all) {
    ASSERT_TRUE(r.rank.has_value());
    EXPECT_EQ(r.host, *r.rank < 8 ? kFastHost : kSlowHost);
    EXPECT_EQ(r.nranks, 16);
    EXPECT_EQ(r.nnodes, 2);
    EXPECT_EQ(r.comm_hash, 0x9a3f1c72e05b48u);
  }
}

TEST(InspectorJson, FirstRecordEveryField) {
  InspectorParseResult r = ParseInspectorJsonLines(
      Read(kDir / "nccl-inspector-48213/gpu-h100-a017-pid73101.log"), "gpu-h100-a017-pid73101.log");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 10u);
  const InspectorRecord& x = r.records[0];
  EXPECT_EQ(x.format, InspectorFormat::kJsonLines);
  EXPECT_EQ(x.line, 1);
  EXPECT_EQ(x.job_id, std::nullopt);
  EXPECT_EQ(x.comm_id, "0x9a3f1c72e05b48");
  EXPECT_EQ(x.comm_hash, 0x9a3f1c72e05b48u);
  EXPECT_EQ(x.comm_name, "train_dp0");
  EXPECT_EQ(x.rank, 0);
  EXPECT_EQ(x.nranks, 16);
  EXPECT_EQ(x.nnodes, 2);
  EXPECT_EQ(x.host, "gpu-h100-a017");
  EXPECT_EQ(x.pid, 73101);
  EXPECT_EQ(x.gpu, std::nullopt);
  EXPECT_EQ(x.gpu_uuid, std::nullopt);
  EXPECT_EQ(x.format_version, "v4.0");
  EXPECT_EQ(x.collective, "all_reduce");
  EXPECT_FALSE(x.p2p);
  EXPECT_EQ(x.peer, std::nullopt);
  EXPECT_EQ(x.seq, 100);
  EXPECT_EQ(x.message_bytes, 8 * kMiB);
  EXPECT_TRUE(x.message_bytes_exact);
  EXPECT_EQ(x.message_bytes_upper, std::nullopt);
  EXPECT_EQ(x.dtype, std::nullopt);
  EXPECT_EQ(x.algorithm, std::nullopt);
  EXPECT_EQ(x.protocol, std::nullopt);
  EXPECT_EQ(x.exec_time_us, 193);
  EXPECT_EQ(x.algbw_gbps, 43.464290);
  EXPECT_EQ(x.busbw_gbps, 81.495544);
  EXPECT_FALSE(x.aggregated);
  EXPECT_EQ(x.timing_source, "kernel_gpu");
  EXPECT_EQ(x.timestamp_us, 1760601600000003);
  EXPECT_EQ(x.start_us, std::nullopt);
}

TEST(InspectorJson, SlowRankAllGatherIsPerRankSize) {
  InspectorParseResult r = ParseInspectorJsonLines(
      Read(kDir / "nccl-inspector-48213/gpu-h100-a018-pid51243.log"), "gpu-h100-a018-pid51243.log");
  ASSERT_EQ(r.records.size(), 10u);
  const InspectorRecord& x = r.records[2];
  EXPECT_EQ(x.line, 3);
  EXPECT_EQ(x.rank, kSlowRank);
  EXPECT_EQ(x.collective, "all_gather");
  EXPECT_EQ(x.seq, 102);
  // The send size of one rank; algbw counts it x n_ranks.
  EXPECT_EQ(x.message_bytes, 32 * kMiB);
  EXPECT_EQ(x.exec_time_us, 8972);
  EXPECT_EQ(x.algbw_gbps, 59.838488);
  EXPECT_EQ(x.busbw_gbps, 56.098582);
  EXPECT_EQ(r.records[3].collective, "reduce_scatter");
}

// ---------------------------------------------------------------------------
// Summary of the JSON job.

struct Expected {
  const char* collective;
  int64_t bytes;
  double median_us, p90_us, max_us, median_busbw, median_rank_mean_us;
};

void PrintTo(const Expected& e, std::ostream* os) { *os << e.collective << " " << e.bytes; }

class InspectorJobSummary : public ::testing::TestWithParam<Expected> {};

TEST_P(InspectorJobSummary, NamesTheSlowRankAndHost) {
  const Expected& e = GetParam();
  std::vector<InspectorGroupSummary> groups =
      SummarizeInspector(ParseAll(kDir / "nccl-inspector-48213"));
  ASSERT_EQ(groups.size(), 5u);
  const InspectorGroupSummary* g = Find(groups, e.collective, e.bytes);
  ASSERT_NE(g, nullptr);
  EXPECT_EQ(g->communicator, "0x9a3f1c72e05b48");
  EXPECT_EQ(g->nranks, 16);
  EXPECT_EQ(g->count, 32u);  // 16 ranks x 2 operations
  EXPECT_DOUBLE_EQ(g->median_us, e.median_us);
  EXPECT_DOUBLE_EQ(g->p90_us, e.p90_us);
  EXPECT_DOUBLE_EQ(g->max_us, e.max_us);
  ASSERT_TRUE(g->median_busbw_gbps.has_value());
  EXPECT_NEAR(*g->median_busbw_gbps, e.median_busbw, 1e-6);
  ASSERT_TRUE(g->median_rank_mean_us.has_value());
  EXPECT_DOUBLE_EQ(*g->median_rank_mean_us, e.median_rank_mean_us);

  ASSERT_EQ(g->slowest_ranks.size(), 3u);
  const InspectorRankStat& slow = g->slowest_ranks[0];
  EXPECT_EQ(slow.rank, kSlowRank);
  EXPECT_EQ(slow.host, kSlowHost);
  EXPECT_EQ(slow.count, 2u);
  EXPECT_NEAR(slow.ratio, 3.0, 0.1);
  EXPECT_LT(g->slowest_ranks[1].ratio, 1.05);  // nobody else stands out

  ASSERT_EQ(g->slowest_hosts.size(), 2u);
  EXPECT_EQ(g->slowest_hosts[0].host, kSlowHost);
  EXPECT_EQ(g->slowest_hosts[0].count, 16u);
  EXPECT_EQ(g->slowest_hosts[0].slowest_rank, kSlowRank);
  // One rank of eight at 3x: the host mean is about 1.25x.
  EXPECT_NEAR(g->slowest_hosts[0].ratio, 1.25, 0.02);
  EXPECT_EQ(g->slowest_hosts[1].host, kFastHost);
  EXPECT_NEAR(g->slowest_hosts[1].ratio, 1.0, 0.02);
}

INSTANTIATE_TEST_SUITE_P(
    Groups, InspectorJobSummary,
    ::testing::Values(Expected{"all_gather", 32 * kMiB, 2961, 3020, 8972, 169.981925, 2968.25},
                      Expected{"all_reduce", 8 * kMiB, 197, 201, 591, 79.840812, 197},
                      Expected{"all_reduce", 64 * kMiB, 843, 856, 2467, 149.266848, 843},
                      Expected{"all_reduce", 256 * kMiB, 2797, 2853, 8559, 179.948688, 2797},
                      Expected{"reduce_scatter", 32 * kMiB, 3052, 3113, 9339, 164.913657, 3052}));

TEST(InspectorSummary, GroupsSortedAndTopNHonoured) {
  InspectorSummaryOptions options;
  options.top_n = 1;
  auto groups = SummarizeInspector(ParseAll(kDir / "nccl-inspector-48213"), options);
  std::vector<std::string> order;
  for (const auto& g : groups) {
    order.push_back(g.collective + "/" + std::to_string(g.message_bytes));
    EXPECT_EQ(g.slowest_ranks.size(), 1u);
    EXPECT_EQ(g.slowest_hosts.size(), 1u);
  }
  EXPECT_EQ(order, (std::vector<std::string>{"all_gather/33554432", "all_reduce/8388608",
                                             "all_reduce/67108864", "all_reduce/268435456",
                                             "reduce_scatter/33554432"}));
  EXPECT_TRUE(SummarizeInspector({}).empty());
}

// ---------------------------------------------------------------------------
// Prometheus, 2.30 label set: one file per GPU, interval aggregates.

TEST(InspectorProm, AggregatesOfTheSlowGpu) {
  const std::string name = "nccl_inspector_metrics_4fda060e-444b-8e79-76b2-c9335bfab83f.prom";
  InspectorParseResult r = ParseInspectorPrometheus(Read(kDir / "prom" / name), name);
  EXPECT_TRUE(r.errors.empty());
  EXPECT_FALSE(r.truncated);
  ASSERT_EQ(r.records.size(), 5u);
  const InspectorRecord& x = r.records[0];
  EXPECT_EQ(x.format, InspectorFormat::kPrometheus);
  EXPECT_EQ(x.line, 1);
  EXPECT_TRUE(x.aggregated);
  EXPECT_EQ(x.format_version, "v5.1");
  EXPECT_EQ(x.job_id, "48213");
  EXPECT_EQ(x.host, kSlowHost);
  EXPECT_EQ(x.gpu, "GPU3");
  EXPECT_EQ(x.gpu_uuid, "4fda060e-444b-8e79-76b2-c9335bfab83f");
  EXPECT_EQ(x.comm_name, "train_dp0");
  EXPECT_EQ(x.comm_id, std::nullopt);  // not in this label set
  EXPECT_EQ(x.rank, std::nullopt);
  EXPECT_EQ(x.pid, std::nullopt);
  EXPECT_EQ(x.seq, std::nullopt);
  EXPECT_EQ(x.timestamp_us, std::nullopt);
  EXPECT_EQ(x.nranks, 16);
  EXPECT_EQ(x.nnodes, 2);
  EXPECT_EQ(x.collective, "all_gather");
  EXPECT_EQ(x.message_bytes, 32 * kMiB);
  EXPECT_EQ(x.message_bytes_upper, 33 * kMiB);
  EXPECT_FALSE(x.message_bytes_exact);
  EXPECT_EQ(x.algorithm, "RING");
  EXPECT_EQ(x.protocol, "SIMPLE");
  EXPECT_EQ(x.exec_time_us, 8883);
  EXPECT_EQ(x.busbw_gbps, 56.6635);
  EXPECT_EQ(x.algbw_gbps, std::nullopt);
  EXPECT_EQ(r.records[1].collective, "reduce_scatter");
  EXPECT_EQ(r.records[1].exec_time_us, 9201.5);
  EXPECT_EQ(r.records[2].collective, "all_reduce");
  EXPECT_EQ(r.records[2].protocol, "LL128");
  EXPECT_EQ(r.records[2].line, 5);
}

TEST(InspectorProm, SummaryNamesTheSlowHostWithoutRanks) {
  size_t files = 0;
  auto all = ParseAll(kDir / "prom", &files);
  EXPECT_EQ(files, 16u);
  ASSERT_EQ(all.size(), 80u);
  auto groups = SummarizeInspector(all);
  ASSERT_EQ(groups.size(), 5u);
  for (const auto& g : groups) {
    EXPECT_EQ(g.communicator, "train_dp0");
    EXPECT_EQ(g.count, 16u);
    EXPECT_FALSE(g.median_rank_mean_us.has_value());
    EXPECT_TRUE(g.slowest_ranks.empty());
    ASSERT_EQ(g.slowest_hosts.size(), 2u);
    EXPECT_EQ(g.slowest_hosts[0].host, kSlowHost) << g.collective << " " << g.message_bytes;
    EXPECT_GT(g.slowest_hosts[0].ratio, 1.1);
  }
}

// Prometheus, 2.29 label set: one sample set per operation.
TEST(InspectorProm, PerOperationLabelSet) {
  const std::string name = "nccl_inspector_metrics_4fda060e-444b-8e79-76b2-c9335bfab83f.prom";
  InspectorParseResult r = ParseInspectorFile(Read(kDir / "prom-2.29" / name), name);
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 5u);
  const InspectorRecord& x = r.records[0];
  EXPECT_FALSE(x.aggregated);
  EXPECT_EQ(x.line, 1);
  EXPECT_EQ(x.comm_id, "0x9a3f1c72e05b48");
  EXPECT_EQ(x.comm_hash, 0x9a3f1c72e05b48u);
  EXPECT_EQ(x.rank, kSlowRank);
  EXPECT_EQ(x.host, kSlowHost);
  EXPECT_EQ(x.gpu, "GPU3");
  EXPECT_EQ(x.job_id, "48213");
  EXPECT_EQ(x.seq, 100);
  EXPECT_EQ(x.timestamp_us, 1760601600000000);
  EXPECT_EQ(x.collective, "all_reduce");
  EXPECT_EQ(x.message_bytes, 8 * kMiB);
  EXPECT_FALSE(x.message_bytes_exact);  // "8.00MB"
  EXPECT_EQ(x.message_bytes_upper, std::nullopt);
  EXPECT_EQ(x.exec_time_us, 591);
  EXPECT_EQ(x.algbw_gbps, 14.1939);
  EXPECT_EQ(x.busbw_gbps, 26.6136);
  EXPECT_EQ(x.algorithm, std::nullopt);
  EXPECT_EQ(r.records[4].line, 13);
  EXPECT_EQ(r.records[4].message_bytes, 256 * kMiB);
}

// ---------------------------------------------------------------------------
// Error fixtures: each error names file:line.

TEST(InspectorErrors, TruncatedFileKeepsEarlierRecords) {
  const std::string name = "gpu-h100-a018-pid51243.log";
  InspectorParseResult r = ParseInspectorFile(Read(kDir / "errors/truncated" / name), name);
  EXPECT_TRUE(r.truncated);
  EXPECT_EQ(r.records.size(), 6u);
  EXPECT_EQ(Messages(r), std::vector<std::string>{
                             "gpu-h100-a018-pid51243.log:7: last line is cut short (still being "
                             "written, or the process died); 6 earlier record(s) kept"});
}

TEST(InspectorErrors, GarbageLineAndMissingField) {
  const std::string name = "gpu-h100-a017-pid73104.log";
  InspectorParseResult r = ParseInspectorFile(Read(kDir / "errors/garbage" / name), name);
  EXPECT_FALSE(r.truncated);
  EXPECT_EQ(r.records.size(), 8u);
  EXPECT_EQ(Messages(r), (std::vector<std::string>{
                             "gpu-h100-a017-pid73104.log:4: not a record: invalid JSON at column 1",
                             "gpu-h100-a017-pid73104.log:7: missing field 'coll'"}));
  EXPECT_EQ(r.records[3].line, 5);
}

// ---------------------------------------------------------------------------
// Inline cases.

// A 2.30 record with fields replaced: {"header":...,"metadata":...,"coll_perf":{PERF}}.
std::string Record(const std::string& perf,
                   const std::string& header = R"("rank":3,"n_ranks":16)") {
  return R"({"header":{"id":"0x1f",)" + header +
         R"(,"nnodes":2},"metadata":{"inspector_output_format_version":"v4.0",)"
         R"("dump_timestamp_us":1760601600000000,"hostname":"h","pid":7},"coll_perf":{)" +
         perf + "}}\n";
}
const std::string kPerf =
    R"("coll":"AllReduce","coll_sn":1,"coll_msg_size_bytes":1048576,"coll_exec_time_us":20)";

struct JsonCase {
  const char* name;
  std::string text;
  size_t records;
  std::vector<std::string> errors;
};

void PrintTo(const JsonCase& c, std::ostream* os) { *os << c.name; }

class InspectorJsonCases : public ::testing::TestWithParam<JsonCase> {};

TEST_P(InspectorJsonCases, RecordsAndErrors) {
  const JsonCase& c = GetParam();
  InspectorParseResult r = ParseInspectorJsonLines(c.text, "x.log");
  EXPECT_EQ(r.records.size(), c.records);
  EXPECT_EQ(Messages(r), c.errors);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InspectorJsonCases,
    ::testing::Values(
        JsonCase{"good", Record(kPerf), 1, {}},
        JsonCase{"blank_lines_and_crlf", "\n  \r\n" + Record(kPerf) + "\r\n", 1, {}},
        JsonCase{"rank_out_of_range_kept_without_rank",
                 Record(kPerf, R"("rank":1e300,"n_ranks":16)"),
                 1,
                 {"x.log:1: field 'rank' out of range: 1e+300"}},
        JsonCase{"rank_not_integer",
                 Record(kPerf, R"("rank":2.5,"n_ranks":16)"),
                 1,
                 {"x.log:1: field 'rank' is not an integer: 2.5"}},
        JsonCase{"rank_not_below_nranks",
                 Record(kPerf, R"("rank":16,"n_ranks":16)"),
                 0,
                 {"x.log:1: rank 16 is not below n_ranks 16"}},
        JsonCase{"wrapped_timer",
                 Record(R"("coll":"AllReduce","coll_msg_size_bytes":8,)"
                        R"("coll_exec_time_us":18446744073709550616)"),
                 0,
                 {"x.log:1: field 'coll_exec_time_us' out of range: 18446744073709550616"}},
        JsonCase{"size_negative",
                 Record(R"("coll":"AllReduce","coll_msg_size_bytes":-8,"coll_exec_time_us":1)"),
                 0,
                 {"x.log:1: field 'coll_msg_size_bytes' out of range: -8"}},
        JsonCase{"size_float_past_int64",
                 Record(R"("coll":"AllReduce","coll_msg_size_bytes":9.3e18,"coll_exec_time_us":1)"),
                 0,
                 {"x.log:1: field 'coll_msg_size_bytes' out of range: 9.3e+18"}},
        JsonCase{"number_too_big_for_double",
                 Record(R"("coll":"AllReduce","coll_msg_size_bytes":1e999,"coll_exec_time_us":1)"),
                 0,
                 {"x.log:1: not a record: invalid JSON (a number out of range)"}},
        JsonCase{"missing_time_and_size",
                 Record(R"("coll":"AllReduce")"),
                 0,
                 {"x.log:1: missing field 'coll_msg_size_bytes'",
                  "x.log:1: missing field 'coll_exec_time_us'"}},
        JsonCase{"no_perf_object",
                 R"({"header":{"id":"0x1"}})"
                 "\n",
                 0,
                 {"x.log:1: missing field 'coll_perf'"}},
        JsonCase{"wrong_types", Record(kPerf + R"(,"coll_busbw_gbs":"fast")", R"("rank":"3")"), 1,
                 std::vector<std::string>{"x.log:1: field 'coll_busbw_gbs' is not a number",
                                          "x.log:1: field 'rank' is not a number"}},
        JsonCase{"not_an_object", "[1,2]\n" + Record(kPerf), 1,
                 std::vector<std::string>{"x.log:1: not a record: not a JSON object"}},
        JsonCase{"binary",
                 std::string("\x89PNG\r\n\x1a\n\0\0\xff\xfe{\"coll\"", 19) + "\n" + Record(kPerf),
                 1,
                 {"x.log:1: not a record: invalid JSON at column 1",
                  "x.log:2: not a record: invalid JSON at column 1",
                  "x.log:3: not a record: invalid JSON at column 1"}},
        JsonCase{"bad_hash",
                 R"({"header":{"id":"zz"},"coll_perf":{)" + kPerf + "}}\n",
                 1,
                 {"x.log:1: field 'id' is not a hex hash: 'zz'"}},
        JsonCase{"glued_records_from_an_aborted_write",
                 R"({"header":{"id":"0x1"},"coll_perf":{)" + Record(kPerf) + Record(kPerf),
                 1,
                 {"x.log:1: not a record: invalid JSON at column 37"}},
        JsonCase{"cut_inside_first_line", R"({"header":{"id":"0x1)", 0,
                 std::vector<std::string>{"x.log:1: last line is cut short (still being written, "
                                          "or the process died); 0 earlier record(s) kept"}},
        JsonCase{"complete_last_line_without_newline",
                 Record(kPerf) + Record(kPerf).substr(0, Record(kPerf).size() - 1),
                 2,
                 {}}));

TEST(InspectorJson, NonFiniteBandwidthIsAbsent) {
  // NaN as the plugin writes it, and the bare inf printf would write.
  std::string text = Record(kPerf + R"(,"coll_algobw_gbs":inf,"coll_busbw_gbs":"nan")");
  InspectorParseResult r = ParseInspectorJsonLines(text, "x.log");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 1u);
  EXPECT_EQ(r.records[0].algbw_gbps, std::nullopt);
  EXPECT_EQ(r.records[0].busbw_gbps, std::nullopt);
  EXPECT_EQ(r.records[0].exec_time_us, 20);
}

TEST(InspectorJson, HugeLineSkippedOthersKept) {
  std::string huge = "{\"pad\":\"" + std::string(2 * kInspectorMaxLineBytes, 'a') + "\"}\n";
  InspectorParseResult r = ParseInspectorJsonLines(Record(kPerf) + huge + Record(kPerf), "x.log");
  EXPECT_EQ(r.records.size(), 2u);
  EXPECT_EQ(Messages(r),
            std::vector<std::string>{"x.log:2: line is " + std::to_string(huge.size() - 1) +
                                     " bytes, over the 1048576-byte limit; skipped"});
  EXPECT_EQ(r.records[1].line, 3);
}

TEST(InspectorJson, ErrorsAreCapped) {
  std::string text;
  for (int i = 0; i < 150; ++i) text += "garbage\n";
  InspectorParseResult r = ParseInspectorJsonLines(text, "x.log");
  ASSERT_EQ(r.errors.size(), kInspectorMaxErrors + 1);
  EXPECT_EQ(r.errors.back().ToString(), "x.log: 50 more error(s) not listed");
}

TEST(InspectorJson, OlderAndNewerRecordShapes) {
  // 2.28/2.29: no comm_name and no timing source.
  std::string old =
      R"({"header":{"id":"0xe62dedaa97644a","rank":4,"n_ranks":8,"nnodes":1},)"
      R"("metadata":{"inspector_output_format_version":"v4.0","git_rev":"",)"
      R"("rec_mechanism":"profiler_plugin","dump_timestamp_us":1752867229276385,)"
      R"("hostname":"n1","pid":438776},"coll_perf":{"coll":"Broadcast","coll_sn":5,)"
      R"("coll_msg_size_bytes":4096,"coll_exec_time_us":9,"coll_algobw_gbs":0.455111,)"
      R"("coll_busbw_gbs":0.455111}})"
      "\n";
  // 2.30 verbose: event traces, and a point-to-point record.
  std::string verbose = Record(kPerf + R"(,"event_trace_sn":{"coll_start_sn":1,"coll_stop_sn":2,)"
                                       R"("kernel_events":[]},"event_trace_ts":{"coll_start_ts":)"
                                       R"(1752867229235059,"coll_stop_ts":1752867229235064,)"
                                       R"("kernel_events":[]})",
                               R"("comm_name":"unknown","rank":0,"n_ranks":2)");
  std::string p2p = R"({"header":{"id":"0x2","comm_name":"PP 1","rank":1,"n_ranks":4,"nnodes":1},)"
                    R"("metadata":{"hostname":"n2","pid":9},"p2p_perf":{"p2p":"Send","p2p_sn":3,)"
                    R"("p2p_peer":2,"p2p_msg_size_bytes":65536,"p2p_exec_time_us":12,)"
                    R"("p2p_timing_source":"kernel_gpu","p2p_algobw_gbs":5.461333,)"
                    R"("p2p_busbw_gbs":5.461333}})"
                    "\n";
  InspectorParseResult r = ParseInspectorJsonLines(old + verbose + p2p, "x.log");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 3u);
  EXPECT_EQ(r.records[0].collective, "broadcast");
  EXPECT_EQ(r.records[0].comm_name, std::nullopt);
  EXPECT_EQ(r.records[0].timing_source, std::nullopt);
  EXPECT_EQ(r.records[0].comm_hash, 0xe62dedaa97644au);
  EXPECT_EQ(r.records[1].start_us, 1752867229235059);
  EXPECT_EQ(r.records[1].comm_name, std::nullopt);  // "unknown"
  const InspectorRecord& s = r.records[2];
  EXPECT_TRUE(s.p2p);
  EXPECT_EQ(s.collective, "send");
  EXPECT_EQ(s.peer, 2);
  EXPECT_EQ(s.seq, 3);
  EXPECT_EQ(s.message_bytes, 65536);
  EXPECT_EQ(s.exec_time_us, 12);
  EXPECT_EQ(s.busbw_gbps, 5.461333);
  EXPECT_EQ(s.comm_name, "PP 1");
}

// ---------------------------------------------------------------------------
// Prometheus inline cases.

const std::string kLabels =
    R"(version="v5.1",slurm_job_id="unknown",node="n1",gpu="GPU0",comm_name="unknown",)"
    R"(n_nodes="1",nranks="4",collective="AllReduce",message_size="4-5GB",algo_proto="NVLS_TREE_LL128")";

TEST(InspectorPromCases, LabelsReadBack) {
  std::string text = "# a comment\n\nnccl_bus_bandwidth_gbs{" + kLabels + "} 678.263\n" +
                     "node_load1 0.5\n" + "nccl_collective_exec_time_microseconds{" + kLabels +
                     "} 9498.47\n";
  InspectorParseResult r = ParseInspectorPrometheus(text, "dir/metrics.prom");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 1u);
  const InspectorRecord& x = r.records[0];
  EXPECT_EQ(x.line, 3);
  EXPECT_EQ(x.job_id, std::nullopt);     // "unknown"
  EXPECT_EQ(x.comm_name, std::nullopt);  // "unknown"
  EXPECT_EQ(x.gpu_uuid, std::nullopt);   // not the plugin's file name
  EXPECT_EQ(x.message_bytes, int64_t{4} << 30);
  EXPECT_EQ(x.message_bytes_upper, int64_t{5} << 30);
  EXPECT_EQ(x.algorithm, "NVLS_TREE");
  EXPECT_EQ(x.protocol, "LL128");
  EXPECT_EQ(x.exec_time_us, 9498.47);
  EXPECT_EQ(x.busbw_gbps, 678.263);
}

TEST(InspectorPromCases, SizesAndEscapes) {
  std::string text =
      R"(nccl_p2p_exec_time_microseconds{comm_name="a\"b\\c",p2p_operation="Recv",message_size="512B",algo_proto="unknown_unknown"} 1.5e+03)"
      "\n"
      R"(nccl_collective_exec_time_microseconds{collective="AllGather",message_size="0B"} 2 1760601600000)"
      "\n";
  InspectorParseResult r = ParseInspectorPrometheus(text, "m.prom");
  EXPECT_TRUE(r.errors.empty());
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[0].comm_name, "a\"b\\c");
  EXPECT_TRUE(r.records[0].p2p);
  EXPECT_EQ(r.records[0].collective, "recv");
  EXPECT_EQ(r.records[0].message_bytes, 512);
  EXPECT_TRUE(r.records[0].message_bytes_exact);
  EXPECT_EQ(r.records[0].algorithm, std::nullopt);
  EXPECT_EQ(r.records[0].protocol, std::nullopt);
  EXPECT_EQ(r.records[0].exec_time_us, 1500);
  EXPECT_EQ(r.records[1].message_bytes, 0);
}

TEST(InspectorPromCases, RepeatedSampleSetIsAnotherRecord) {
  std::string set = "nccl_collective_exec_time_microseconds{" + kLabels + "} 10\n";
  InspectorParseResult r = ParseInspectorPrometheus(set + set, "m.prom");
  ASSERT_EQ(r.records.size(), 2u);
  EXPECT_EQ(r.records[1].line, 2);
}

struct PromCase {
  const char* name;
  std::string text;
  size_t records;
  bool truncated;
  std::vector<std::string> errors;
};

void PrintTo(const PromCase& c, std::ostream* os) { *os << c.name; }

class InspectorPromErrors : public ::testing::TestWithParam<PromCase> {};

TEST_P(InspectorPromErrors, NameFileAndLine) {
  const PromCase& c = GetParam();
  InspectorParseResult r = ParseInspectorPrometheus(c.text, "m.prom");
  EXPECT_EQ(r.records.size(), c.records);
  EXPECT_EQ(r.truncated, c.truncated);
  EXPECT_EQ(Messages(r), c.errors);
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InspectorPromErrors,
    ::testing::Values(
        PromCase{"cut_value",
                 "nccl_collective_exec_time_microseconds{" + kLabels + "} 10\n" +
                     "nccl_collective_exec_time_microseconds{" + kLabels + ",gpu2=\"x\"} 94",
                 1,
                 true,
                 {"m.prom:2: last line has no newline: cut short while being written; 1 earlier "
                  "sample(s) kept"}},
        PromCase{"no_exec_time",
                 "\nnccl_bus_bandwidth_gbs{" + kLabels + "} 1\n",
                 0,
                 false,
                 {"m.prom:2: no nccl_collective_exec_time_microseconds sample for these labels"}},
        PromCase{"bad_syntax",
                 "nccl_bus_bandwidth_gbs{node=n1} 1\nnccl_bus_bandwidth_gbs{a=\"1\"}\n"
                 "nccl_bus_bandwidth_gbs{a=\"1\" 2\nnccl_bus_bandwidth_gbs x\n"
                 "\x01\x02\n",
                 0,
                 false,
                 {"m.prom:1: not a Prometheus sample: label value not quoted (column 29)",
                  "m.prom:2: not a Prometheus sample: no value (column 30)",
                  "m.prom:3: not a Prometheus sample: expected ',' or '}' (column 30)",
                  "m.prom:4: not a Prometheus sample: bad value 'x' (column 24)",
                  "m.prom:5: not a Prometheus sample: no metric name (column 1)"}},
        PromCase{"bad_labels",
                 "nccl_collective_exec_time_microseconds{collective=\"AllReduce\","
                 "message_size=\"lots\"} 5\n"
                 "nccl_collective_exec_time_microseconds{message_size=\"1B\"} 5\n"
                 "nccl_collective_exec_time_microseconds{collective=\"AllReduce\","
                 "message_size=\"99999999999TB\"} 5\n"
                 "nccl_collective_exec_time_microseconds{collective=\"AllReduce\","
                 "message_size=\"1KB\",rank=\"-1\",timestamp=\"2025-13-01T00:00:00Z\"} 5\n"
                 "nccl_collective_exec_time_microseconds{collective=\"AllReduce\","
                 "message_size=\"1KB\"} -Inf\n",
                 1,
                 false,
                 {"m.prom:1: label 'message_size' not understood: 'lots'",
                  "m.prom:2: missing label 'collective'",
                  "m.prom:3: label 'message_size' not understood: '99999999999TB'",
                  "m.prom:4: label 'rank' is not a valid number: '-1'",
                  "m.prom:4: label 'timestamp' not understood: '2025-13-01T00:00:00Z'",
                  "m.prom:5: exec time out of range: -inf"}}));

}  // namespace
}  // namespace fabtrack
