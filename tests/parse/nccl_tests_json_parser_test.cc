#include "collector/parse/nccl_tests_json_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

namespace fabtrack {
namespace {

std::string ReadFixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/nccl_tests/" + name, std::ios::binary);
  EXPECT_TRUE(in.good()) << "missing fixture " << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

struct Case {
  const char* fixture;
  std::optional<std::string> collective;
  std::optional<int> ranks;
  std::vector<std::string> hosts;
  size_t rows;
  int64_t first_size;
  int64_t last_size;
  int last_row_line;
  bool complete;
  std::optional<int64_t> oob_count;
  std::optional<bool> oob_ok;
  std::optional<double> avg_busbw;
  std::vector<int> error_lines;
};

// Failure messages name the case instead of dumping its bytes.
void PrintTo(const Case& c, std::ostream* os) { *os << c.fixture; }

class JsonFixtureTest : public ::testing::TestWithParam<Case> {};

TEST_P(JsonFixtureTest, KeyFacts) {
  const Case& c = GetParam();
  std::vector<ParseError> errors;
  std::vector<TestTable> tables = ParseNcclTestsJson(ReadFixture(c.fixture), &errors);
  ASSERT_EQ(tables.size(), 1u);
  const TestTable& t = tables[0];
  EXPECT_EQ(t.collective, c.collective);
  EXPECT_EQ(t.ranks, c.ranks);
  EXPECT_EQ(t.hosts, c.hosts);
  EXPECT_EQ(t.complete, c.complete);
  EXPECT_EQ(t.oob_count, c.oob_count);
  EXPECT_EQ(t.oob_ok, c.oob_ok);
  EXPECT_EQ(t.avg_busbw.has_value(), c.avg_busbw.has_value());
  if (t.avg_busbw && c.avg_busbw) {
    EXPECT_NEAR(*t.avg_busbw, *c.avg_busbw, 1e-6);
  }
  ASSERT_EQ(t.rows.size(), c.rows);
  EXPECT_EQ(t.rows.front().size_bytes, c.first_size);
  EXPECT_EQ(t.rows.back().size_bytes, c.last_size);
  EXPECT_EQ(t.rows.back().line, c.last_row_line);
  std::vector<int> lines;
  for (const ParseError& e : errors) lines.push_back(e.line);
  EXPECT_EQ(lines, c.error_lines);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, JsonFixtureTest,
                         ::testing::Values(
                             // Single-line report as nccl-tests writes it.
                             Case{"j01_allreduce_complete.json",
                                  "all_reduce",
                                  2,
                                  {"jnode-a", "jnode-b"},
                                  5,
                                  8,
                                  134217728,
                                  1,
                                  true,
                                  0,
                                  true,
                                  14.812203,
                                  {}},
                             // Cut inside the fourth result: three results recovered.
                             Case{"j02_allreduce_truncated.json",
                                  "all_reduce",
                                  2,
                                  {"jnode-a", "jnode-b"},
                                  3,
                                  8,
                                  131072,
                                  1,
                                  false,
                                  std::nullopt,
                                  std::nullopt,
                                  std::nullopt,
                                  {1}},
                             // Pretty-printed, per-iteration, -c 0, a row without out_of_place.
                             Case{"j03_allgather_per_iter_check_off.json",
                                  "all_gather",
                                  2,
                                  {"pi-host"},
                                  3,
                                  1048576,
                                  3145728,
                                  174,
                                  true,
                                  3,
                                  false,
                                  12.25,
                                  {}}),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return std::string(info.param.fixture).substr(0, 3);
                         });

TEST(NcclTestsJsonParser, CompleteReportFields) {
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(ReadFixture("j01_allreduce_complete.json"), &errors);
  ASSERT_EQ(tables.size(), 1u);
  const TestTable& t = tables[0];
  EXPECT_EQ(t.started_at, "2025-01-02 10:11:12");
  EXPECT_EQ(t.nccl_version_code, 22907);
  EXPECT_EQ(t.nccl_tests_version, std::nullopt);
  ASSERT_GE(t.command_args.size(), 3u);
  EXPECT_EQ(t.command_args[0], "./build/all_reduce_perf");
  EXPECT_EQ(t.command_args[2], "8");
  EXPECT_EQ(t.environment.at("NCCL_DEBUG"), "INFO");
  EXPECT_EQ(t.environment.at("NCCL_IB_HCA"), "mlx5_0,mlx5_1");
  EXPECT_EQ(t.environment.at("UCX_TLS"), "rc,sm");
  EXPECT_EQ(t.environment.at("OMPI_COMM_WORLD_RANK"), "0");
  EXPECT_EQ(t.environment.at("SLURM_JOB_ID"), "40112");
  EXPECT_EQ(t.environment.at("CUDA_VISIBLE_DEVICES"), "0");
  EXPECT_EQ(t.environment.count("PATH"), 0u);
  EXPECT_EQ(t.environment.count("SECRET_TOKEN"), 0u);
  EXPECT_EQ(t.environment.count("LD_LIBRARY_PATH"), 0u);
  EXPECT_EQ(t.parameters.step_factor, 2);
  EXPECT_EQ(t.parameters.step_bytes, std::nullopt);
  EXPECT_EQ(t.parameters.iters, 20);
  EXPECT_EQ(t.parameters.agg_iters, 1);
  ASSERT_EQ(t.devices.size(), 2u);
  EXPECT_EQ(t.devices[1].rank, 1);
  EXPECT_EQ(t.devices[1].pid, 1877);
  EXPECT_EQ(t.devices[1].bus_id, "0000:0f:00");
  EXPECT_EQ(t.devices[1].gpu_model, "NVIDIA H100 80GB HBM3");
  const SizeRow& r = t.rows[0];
  EXPECT_EQ(r.count, 2);
  EXPECT_EQ(r.type, "float");
  EXPECT_EQ(r.redop, "sum");
  EXPECT_EQ(r.root, -1);  // from the padded string "    -1"
  ASSERT_TRUE(r.oop && r.ip);
  EXPECT_EQ(r.oop->time_us, 36.5);
  EXPECT_EQ(r.ip->time_us, 35.9);
  EXPECT_EQ(r.oop->wrong, 0);  // 0.000000 as a double
  EXPECT_EQ(r.oop->max_error, std::nullopt);
  EXPECT_EQ(r.oop->iter_min_us, std::nullopt);
  EXPECT_NEAR(*t.rows[3].ip->busbw_gbps, 35.040134, 1e-9);
}

TEST(NcclTestsJsonParser, TruncatedReportNamesWhereItEnded) {
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(ReadFixture("j02_allreduce_truncated.json"), &errors);
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].message.find("ends early"), std::string::npos) << errors[0].message;
  // The partial fourth result (16 MiB) is not returned half-filled.
  for (const SizeRow& r : tables[0].rows) EXPECT_NE(r.size_bytes, 16777216);
}

TEST(NcclTestsJsonParser, PerIterationAndNulls) {
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(ReadFixture("j03_allgather_per_iter_check_off.json"), &errors);
  ASSERT_EQ(tables.size(), 1u);
  const TestTable& t = tables[0];
  EXPECT_EQ(t.parameters.step_bytes, 1048576);
  EXPECT_EQ(t.parameters.step_factor, std::nullopt);
  EXPECT_EQ(t.parameters.validation, 0);
  EXPECT_TRUE(t.environment.count("NCCL_NET"));
  EXPECT_TRUE(t.environment.count("CUDA_HOME"));
  EXPECT_FALSE(t.environment.count("TERM"));
  const SizeRow& r = t.rows[0];
  EXPECT_EQ(r.line, 60);
  EXPECT_EQ(r.redop, std::nullopt);  // "none"
  ASSERT_TRUE(r.oop && r.ip);
  EXPECT_EQ(r.oop->time_us, 20.0);        // from "cpu_time"
  EXPECT_EQ(r.oop->wrong, std::nullopt);  // null: not checked
  EXPECT_NEAR(*r.oop->iter_min_us, 19.6, 1e-9);
  EXPECT_NEAR(*r.oop->iter_max_us, 20.4, 1e-9);
  EXPECT_NEAR(*r.oop->iter_p50_us, 20.0, 1e-9);
  EXPECT_NEAR(*r.oop->iter_p99_us, 20.4, 1e-9);
  EXPECT_NEAR(*r.oop->iter_cv_pct, 1.414214, 1e-6);
  EXPECT_NEAR(*r.ip->iter_min_us, 19.404, 1e-9);
  // Trace-replay row: out_of_place null, in-place values "nan".
  const SizeRow& last = t.rows[2];
  EXPECT_FALSE(last.oop.has_value());
  ASSERT_TRUE(last.ip.has_value());
  EXPECT_EQ(last.ip->time_us, std::nullopt);
  EXPECT_EQ(last.ip->busbw_gbps, std::nullopt);
}

TEST(NcclTestsJsonParser, GarbageGivesOneErrorWithItsLine) {
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson("{\n  \"version\": 2,\n  \"args\": [oops]\n}\n", &errors);
  EXPECT_TRUE(tables.empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 3);
}

TEST(NcclTestsJsonParser, NotJsonAtAll) {
  std::vector<ParseError> errors;
  EXPECT_TRUE(ParseNcclTestsJson("# nThread 1 nGpus 1\n", &errors).empty());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 1);
  EXPECT_TRUE(ParseNcclTestsJson("", nullptr).empty());
}

TEST(NcclTestsJsonParser, ValidJsonThatIsNotAReport) {
  std::vector<ParseError> errors;
  EXPECT_TRUE(ParseNcclTestsJson("[1, 2, 3]", &errors).empty());
  EXPECT_EQ(errors.size(), 1u);
}

TEST(NcclTestsJsonParser, TruncatedMultiLineReportErrorLine) {
  std::string text =
      "{\"version\":2,\n\"args\":[\"./sendrecv_perf\"],\n\"config\":{\"ngpus\":2},\n"
      "\"results\":[{\"size\":8,\"root\":\"    -1\",\"out_of_place\":{\"time\":1.5}},\n"
      "{\"size\":16,\"out_of_pl";
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(text, &errors);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_EQ(tables[0].collective, "sendrecv");
  EXPECT_FALSE(tables[0].complete);
  EXPECT_EQ(tables[0].ranks, std::nullopt);  // no device list
  ASSERT_EQ(tables[0].rows.size(), 1u);
  EXPECT_EQ(tables[0].rows[0].line, 4);
  EXPECT_EQ(tables[0].rows[0].oop->time_us, 1.5);
  EXPECT_FALSE(tables[0].rows[0].ip.has_value());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].line, 5);
}

TEST(NcclTestsJsonParser, WrongTypesReadAsAbsentNeverThrow) {
  std::string text =
      "{\"version\":\"x\",\"args\":\"notalist\",\"env\":[1,\"NCCL_A=1\",\"NCCL_NOEQ\"],"
      "\"nccl_version\":1e300,\"config\":{\"nthreads\":\"one\",\"devices\":[5,{\"rank\":\"a\"}]},"
      "\"results\":[7,{\"size\":-4},{\"size\":8,\"count\":2.5,\"out_of_place\":[1],"
      "\"in_place\":{\"time\":true,\"nwrong\":-1}}],\"out_of_bounds\":[],"
      "\"average_bus_bandwidth\":{\"bandwidth\":\"fast\"}}";
  std::vector<ParseError> errors;
  std::vector<TestTable> tables;
  ASSERT_NO_THROW(tables = ParseNcclTestsJson(text, &errors));
  ASSERT_EQ(tables.size(), 1u);
  const TestTable& t = tables[0];
  EXPECT_EQ(t.collective, std::nullopt);
  EXPECT_EQ(t.environment.size(), 1u);
  EXPECT_EQ(t.nccl_version_code, std::nullopt);
  EXPECT_EQ(t.parameters.threads, std::nullopt);
  ASSERT_EQ(t.rows.size(), 1u);
  EXPECT_EQ(t.rows[0].count, std::nullopt);
  EXPECT_FALSE(t.rows[0].oop.has_value());
  ASSERT_TRUE(t.rows[0].ip.has_value());
  EXPECT_EQ(t.rows[0].ip->time_us, std::nullopt);
  EXPECT_EQ(t.rows[0].ip->wrong, std::nullopt);
  EXPECT_EQ(t.avg_busbw, std::nullopt);
  EXPECT_FALSE(t.complete);      // out_of_bounds is not an object
  EXPECT_EQ(errors.size(), 1u);  // two results without a valid size
}

TEST(NcclTestsJsonParser, BareInfinityIsReadAsAbsent) {
  // nccl-tests writes doubles with %lf: an infinite bandwidth is a bare "inf".
  std::string text =
      "{\"version\":2,\"args\":[\"all_reduce_perf\"],\"results\":[{\"size\":0,"
      "\"out_of_place\":{\"time\":0.000000,\"alg_bw\":inf,\"bus_bw\":-inf,\"nwrong\":0.0}}],"
      "\"out_of_bounds\":{\"count\":0,\"okay\":\"true\"},"
      "\"average_bus_bandwidth\":{\"bandwidth\":\"nan\",\"okay\":\"unchecked\"}}";
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(text, &errors);
  ASSERT_EQ(tables.size(), 1u);
  EXPECT_TRUE(errors.empty());
  EXPECT_TRUE(tables[0].complete);
  EXPECT_EQ(tables[0].rows[0].oop->time_us, 0.0);
  EXPECT_EQ(tables[0].rows[0].oop->algbw_gbps, std::nullopt);
  EXPECT_EQ(tables[0].rows[0].oop->busbw_gbps, std::nullopt);
  EXPECT_EQ(tables[0].avg_busbw, std::nullopt);
  EXPECT_EQ(tables[0].oob_ok, true);
}

// hypercube_perf -J writes its op as "" (hypercube.cu's op name): no op, as
// the printed table's blank column reads.
TEST(NcclTestsJsonParser, HypercubesEmptyOpIsNoOp) {
  std::vector<ParseError> errors;
  auto tables = ParseNcclTestsJson(
      R"({"version": 3, "args": ["./hypercube_perf", "-g", "2"], "nccl_version": 22809,
          "config": {"nthreads": 1, "ngpus": 2, "devices": [
            {"rank": 0, "group": 0, "pid": 7, "hostname": "localhost", "device": 0,
             "device_hex": "1e", "device_info": "NVIDIA GeForce RTX 5090"},
            {"rank": 1, "group": 0, "pid": 7, "hostname": "localhost", "device": 1,
             "device_hex": "22", "device_info": "NVIDIA GeForce RTX 5090"}]},
          "results": [{"size": 32, "count": 4, "type": "float", "redop": "", "root": "    -1",
            "out_of_place": {"time": 9.6, "alg_bw": 0.0017, "bus_bw": 0.0017, "nwrong": 0.0},
            "in_place": {"time": 9.8, "alg_bw": 0.0016, "bus_bw": 0.0016, "nwrong": 0.0}}],
          "out_of_bounds": {"count": 0, "okay": true},
          "average_bus_bandwidth": {"bandwidth": 0.0017, "okay": "unchecked"}})",
      &errors);
  EXPECT_TRUE(errors.empty()) << errors.front().message;
  ASSERT_EQ(tables.size(), 1u);
  ASSERT_EQ(tables[0].rows.size(), 1u);
  EXPECT_EQ(tables[0].collective, "hypercube");
  EXPECT_EQ(tables[0].rows[0].redop, std::nullopt);
  EXPECT_EQ(tables[0].rows[0].root, -1);
}

}  // namespace
}  // namespace fabtrack
