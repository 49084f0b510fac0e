// What `fabtrack sweep --bench nccl-tests` stores from one program's output:
// the recorded outputs of nccl-tests 2.19.6 programs (printed table with and
// without NCCL's log, -J report), and the ways a launch goes wrong.
#include "collector/ingest/nccl_tests_run.h"

#include <gtest/gtest.h>

#include <fstream>

namespace fabtrack {
namespace {

std::string Read(const std::string& relative) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/" + relative, std::ios::binary);
  EXPECT_TRUE(in) << relative;
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

NcclTestsLaunch Launch(const std::string& collective, int ranks) {
  NcclTestsLaunch l;
  l.collective = collective;
  l.nodes = ranks;
  l.expected_ranks = ranks;
  l.cluster = "lab";
  l.launched_at = "2026-12-04T02:00:00Z";
  l.command_line = "mpirun -np 2 /opt/nt/" + collective + "_perf -b 8";
  l.sweep_id = "S1";
  l.tags = {{"night", "3"}};
  l.transcript_path = "/out/S1.nodes2." + collective + ".txt";
  const std::string stem = "fake_nccl_tests/outputs/" + collective + "." + std::to_string(ranks);
  l.transcript = Read(stem + ".txt");
  return l;
}

TEST(NcclTestsRunTest, PrintedTableWithItsNcclLog) {
  NcclTestsRuns built = BuildNcclTestsRuns(Launch("all_reduce", 2));
  EXPECT_TRUE(built.problems.empty()) << built.problems.front();
  ASSERT_EQ(built.runs.size(), 1u);
  const RunRecord& run = built.runs[0];
  EXPECT_EQ(run.source, "nccl-tests");
  EXPECT_EQ(run.collective, "all_reduce");
  EXPECT_EQ(run.nodes, 2);
  EXPECT_EQ(run.ranks, 2);
  EXPECT_EQ(run.nccl_tests_version, "2.19.6");
  EXPECT_EQ(run.hosts, (std::vector<std::string>{"gpu-a01", "gpu-a02"}));
  EXPECT_EQ(run.network, "Socket");  // from the NCCL INFO lines before the table
  EXPECT_EQ(run.gdrdma, false);
  EXPECT_EQ(run.status, RunStatus::kComplete);
  EXPECT_EQ(run.started_at, "2026-12-04T02:00:00Z");
  EXPECT_EQ(run.sweep_id, "S1");
  EXPECT_EQ(run.tags.at("night"), "3");
  EXPECT_EQ(run.command_line, "mpirun -np 2 /opt/nt/all_reduce_perf -b 8");
  ASSERT_EQ(run.results.size(), 9u);
  EXPECT_EQ(run.results.back().row.size_bytes, 134217728);
  ASSERT_TRUE(run.results.back().row.oop);
  EXPECT_DOUBLE_EQ(*run.results.back().row.oop->busbw_gbps, 1.19);  // as printed
  EXPECT_EQ(run.content_hash.size(), 64u);
}

// The six collectives as nccl-tests 2.19.6 printed them on an H200 (one
// rank; all_reduce and all_gather with -J and NCCL_DEBUG=INFO).
TEST(NcclTestsRunTest, RecordedH200OutputsOfSixCollectives) {
  for (const std::string collective :
       {"all_reduce", "all_gather", "reduce_scatter", "alltoall", "broadcast", "sendrecv"}) {
    SCOPED_TRACE(collective);
    NcclTestsLaunch launch = Launch(collective, 1);
    const bool with_report = collective.starts_with("all_");
    if (with_report) {
      launch.json_path = "/out/r.json";
      launch.json = Read("fake_nccl_tests/outputs/" + collective + ".1.json");
    }
    NcclTestsRuns built = BuildNcclTestsRuns(launch);
    EXPECT_TRUE(built.problems.empty()) << built.problems.front();
    ASSERT_EQ(built.runs.size(), 1u);
    const RunRecord& run = built.runs[0];
    EXPECT_EQ(run.status, RunStatus::kComplete);
    EXPECT_EQ(run.collective, collective);
    EXPECT_EQ(run.nccl_tests_version, "2.19.6");
    EXPECT_EQ(run.nccl_version, "2.28.9");
    EXPECT_EQ(run.gpu_model, "NVIDIA H200");
    EXPECT_EQ(run.hosts, std::vector<std::string>{"vm"});
    ASSERT_EQ(run.results.size(), 14u);  // 8 B x 4^k up to -e 1G: 8 B .. 512 MiB
    EXPECT_EQ(run.results.back().row.size_bytes, 536870912);
    for (const ResultRow& r : run.results) {
      ASSERT_TRUE(r.row.oop);
      EXPECT_EQ(r.row.oop->wrong.value_or(-1), 0) << r.row.size_bytes;
    }
    if (with_report) {
      // The log printed between header and table: NCCL fell back to sockets
      // (no HCA on that machine); the image's NCCL_VERSION is not a setting.
      EXPECT_EQ(run.network, "Socket");
      EXPECT_EQ(run.nccl_env.count("NCCL_VERSION"), 0u);
      EXPECT_EQ(run.nccl_env.at("NCCL_DEBUG"), "INFO");
    }
  }
}

// The -J report's numbers (more digits) with the printed header's version
// and the printed log's evidence.
TEST(NcclTestsRunTest, JsonReportPreferredAndCompletedFromThePrintedOutput) {
  NcclTestsLaunch launch = Launch("all_reduce", 2);
  launch.json_path = "/out/S1.nodes2.all_reduce.json";
  launch.json = Read("fake_nccl_tests/outputs/all_reduce.2.json");
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  ASSERT_EQ(built.runs.size(), 1u);
  const RunRecord& run = built.runs[0];
  EXPECT_EQ(run.nccl_tests_version, "2.19.6");
  EXPECT_EQ(run.network, "Socket");
  ASSERT_EQ(run.results.size(), 9u);
  const double busbw = *run.results.back().row.oop->busbw_gbps;
  EXPECT_NE(busbw, 1.19);  // not the rounded printed value
  EXPECT_NEAR(busbw, 1.19, 0.005);
  // A different report (hash) than the printed output alone.
  EXPECT_NE(run.content_hash, BuildNcclTestsRuns(Launch("all_reduce", 2)).runs[0].content_hash);
}

// -N 3: nccl-tests prints the sizes three times in one table; the last
// cycle is the run (the same as fabtrack-allreduce -N stores).
TEST(NcclTestsRunTest, CyclesKeepTheLastOne) {
  NcclTestsLaunch launch = Launch("all_reduce", 2);
  std::string& text = launch.transcript;
  const size_t first = text.find("           8             2");
  const size_t trailer = text.find("# Out of bounds");
  const std::string rows = text.substr(first, trailer - first);
  std::string last = rows;
  last.replace(last.find("  1.19  "), 8, "  1.17  ");  // 16 MiB oop algbw, last cycle only
  text = text.substr(0, first) + rows + rows + last + text.substr(trailer);
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  ASSERT_EQ(built.runs.size(), 1u);
  ASSERT_EQ(built.runs[0].results.size(), 9u);
  EXPECT_EQ(built.runs[0].parameters.at("cycles"), "3");
  EXPECT_EQ(built.runs[0].results.front().row.size_bytes, 8);
  EXPECT_DOUBLE_EQ(*built.runs[0].results[7].row.oop->algbw_gbps, 1.17);
}

TEST(NcclTestsRunTest, TruncatedReportFallsBackToThePrintedTable) {
  NcclTestsLaunch launch = Launch("all_reduce", 2);
  launch.json_path = "/out/r.json";
  launch.json = Read("nccl_tests/j02_allreduce_truncated.json");
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  ASSERT_EQ(built.runs.size(), 1u);
  EXPECT_DOUBLE_EQ(*built.runs[0].results.back().row.oop->busbw_gbps, 1.19);
  ASSERT_EQ(built.problems.size(), 1u);
  EXPECT_EQ(built.problems[0].rfind("/out/r.json:", 0), 0u) << built.problems[0];
  EXPECT_NE(built.problems[0].find("printed table is stored instead"), std::string::npos);
}

// A program built without MPI=1 under mpirun -np 2: two 1-rank jobs, two
// tables. Storing them as a 2-node run would be a lie.
TEST(NcclTestsRunTest, OneJobPerProcessIsRefused) {
  NcclTestsLaunch launch = Launch("all_gather", 2);
  launch.transcript = Read("fake_nccl_tests/outputs/all_gather.1.txt") +
                      Read("fake_nccl_tests/outputs/all_gather.1.txt");
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  EXPECT_TRUE(built.runs.empty());
  ASSERT_FALSE(built.problems.empty());
  EXPECT_NE(built.problems.back().find("1 rank(s) where the sweep launched 2"), std::string::npos)
      << built.problems.back();
  EXPECT_EQ(built.problems.back().rfind("/out/S1.nodes2.all_gather.txt:", 0), 0u);
}

TEST(NcclTestsRunTest, TableOfAnotherCollectiveIsRefused) {
  NcclTestsLaunch launch = Launch("all_gather", 2);
  launch.collective = "reduce_scatter";
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  EXPECT_TRUE(built.runs.empty());
  EXPECT_NE(built.problems.back().find("the table is all_gather"), std::string::npos);
}

// nccl-tests exits non-zero when results were wrong; the trailer may still
// read OK (the check of another size failed): the run is stored as failed.
TEST(NcclTestsRunTest, NonZeroExitMakesTheRunFailed) {
  NcclTestsLaunch launch = Launch("all_reduce", 1);
  launch.exit_code = 1;
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  ASSERT_EQ(built.runs.size(), 1u);
  EXPECT_EQ(built.runs[0].status, RunStatus::kFailed);
  EXPECT_NE(built.problems.back().find("exit 1"), std::string::npos);
}

// The program died before its table: its NCCL log is the night's evidence.
TEST(NcclTestsRunTest, LogWithoutTableIsAFailedRunWithTheLog) {
  NcclTestsLaunch launch = Launch("all_reduce", 2);
  launch.transcript =
      "gpu-a01:41207:41207 [0] NCCL INFO NCCL version 2.28.9+cuda13.0\n"
      "gpu-a01:41207:41230 [0] transport/net_ib.cc:2146 NCCL WARN NET/IB : Got completion from "
      "peer 10.20.0.12<34567> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid "
      "::ffff:10.20.0.11 remoteGids::ffff:10.20.0.12 hca mlx5_0\n"
      "gpu-a01: Test NCCL failure common.cu:1279 'remote process exited or there was a network "
      "error / '\n";
  launch.exit_code = 3;
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  ASSERT_EQ(built.runs.size(), 1u);
  EXPECT_EQ(built.runs[0].source, "nccl-log");
  EXPECT_EQ(built.runs[0].status, RunStatus::kFailed);
  EXPECT_EQ(built.runs[0].collective, "all_reduce");
  EXPECT_FALSE(built.runs[0].log_events.empty());
}

TEST(NcclTestsRunTest, NothingPrintedIsAnErrorNamingTheTranscript) {
  NcclTestsLaunch launch = Launch("all_reduce", 2);
  launch.transcript =
      "--------------------------------------------------------------------------\n"
      "mpirun was unable to launch the specified application\n";
  launch.exit_code = 1;
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  EXPECT_TRUE(built.runs.empty());
  EXPECT_NE(built.problems.back().find("neither a result table nor NCCL log lines (exit 1)"),
            std::string::npos)
      << built.problems.back();
}

}  // namespace
}  // namespace fabtrack
