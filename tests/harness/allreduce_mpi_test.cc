// fabtrack-allreduce with real MPI ranks (mpirun, TCP between processes):
// table, result file, database, bad flags, and a rank dying mid-run.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iterator>
#include <nlohmann/json.hpp>
#include <vector>

#include "collector/parse/parse_file.h"
#include "core/run_record_json.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::TestDatabase;

using Result = fabtrack::testing::CommandOutput;
using fabtrack::testing::ReadFileOrEmpty;

std::string TempPath(const std::string& name) {
  return ::testing::TempDir() + "/" + name + "_" + std::to_string(getpid());
}

// mpirun -np N fabtrack-allreduce ARGS, over TCP between the ranks.
Result MpiRun(int ranks, const std::string& args, const std::string& env = "") {
  return fabtrack::testing::RunCommand(
      "env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 " + env + " " +
      std::string(FABTRACK_MPIEXEC) + " --oversubscribe --mca btl self,tcp -np " +
      std::to_string(ranks) + " " + FABTRACK_ALLREDUCE + " " + args);
}

TEST(AllreduceMpiTest, TableParsesBackWithCorrectResults) {
  Result r = MpiRun(3, "-b 8 -e 64K -f 8 -n 10 -w 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ParsedFile parsed = ParseText(r.out, "stdout");
  ASSERT_EQ(parsed.tests.size(), 1u) << r.out;
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors[0].message;
  const TestTable& t = parsed.tests[0];
  EXPECT_EQ(t.collective, "all_reduce");
  EXPECT_EQ(t.ranks, 3);
  EXPECT_TRUE(t.complete);
  EXPECT_EQ(t.oob_ok, true);
  ASSERT_EQ(t.rows.size(), 5u);  // 8, 64, 512, 4K, 32K
  for (const SizeRow& row : t.rows) {
    EXPECT_EQ(row.oop->wrong, 0);  // a real check of the reduced values
    EXPECT_EQ(row.ip->wrong, 0);
    EXPECT_GT(*row.oop->time_us, 0);
    // busbw = algbw * 2(n-1)/n, as printed (2 decimals).
    EXPECT_NEAR(*row.oop->busbw_gbps, *row.oop->algbw_gbps * 4.0 / 3.0, 0.011);
    EXPECT_GE(*row.oop->iter_p99_us, *row.oop->iter_p50_us);
  }
  EXPECT_EQ(t.rows.back().size_bytes, 32768);
  EXPECT_EQ(t.rows.back().count, 8192);
}

// --sysfs: the node facts come from the given root, "{host}" being each
// node's host name (a test's fake nodes have their own trees); without it
// /sys, which has no HCA here.
TEST(AllreduceMpiTest, NodeFactsAreReadUnderTheSysfsRootOfEachHost) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  const std::string root = TempPath("facts_trees");
  ASSERT_EQ(std::system(("sh " + std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/make_cx7_tree.sh " +
                         root + "/" + host + " 2")
                            .c_str()),
            0);
  std::ofstream(root + "/" + host + "/class/infiniband/mlx5_1/fw_ver") << "28.40.1000\n";
  const std::string file = TempPath("facts") + ".json";
  Result r = MpiRun(2, "-b 1K -e 1K -n 2 -w 1 -q --sysfs " + root + "/{host} --output " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::string error;
  std::optional<RunRecord> run =
      RunRecordFromJson(nlohmann::json::parse(ReadFileOrEmpty(file)), &error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->node_facts.at("fw_ver mlx5_0"), "28.39.1002");
  EXPECT_EQ(run->node_facts.at("fw_ver mlx5_1"), "28.40.1000");
  EXPECT_EQ(run->node_facts.at("link mlx5_0/1"), "400 Gb/sec (4X NDR)");

  Result plain = MpiRun(2, "-b 1K -e 1K -n 2 -w 1 -q --output " + file);
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  run = RunRecordFromJson(nlohmann::json::parse(ReadFileOrEmpty(file)), &error);
  ASSERT_TRUE(run) << error;
  for (const auto& [name, value] : run->node_facts) {
    EXPECT_NE(name.rfind("fw_ver mlx5_", 0), 0u) << "read from the fake tree without --sysfs";
  }
}

TEST(AllreduceMpiTest, EveryTypeAndOpChecksOut) {
  for (const char* args : {"-d double -o max", "-d int32 -o min", "-d int8 -o sum",
                           "-d uint64 -o prod", "-d float -o prod"}) {
    Result r = MpiRun(2, std::string("-b 1K -e 1K -n 3 -w 1 ") + args);
    ASSERT_EQ(r.exit_code, 0) << args << "\n" << r.err;
    ParsedFile parsed = ParseText(r.out, "stdout");
    ASSERT_EQ(parsed.tests.size(), 1u) << args;
    EXPECT_EQ(parsed.tests[0].oob_count, 0) << args;
  }
}

TEST(AllreduceMpiTest, ResultFileHasSamplesRanksAndStraggler) {
  std::string file = TempPath("result") + ".json";
  Result r = MpiRun(2, "-b 1K -e 4K -f 4 -n 7 -w 1 -q --tag night=7 --output " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out.empty()) << "quiet prints no table";
  nlohmann::json doc = nlohmann::json::parse(ReadFileOrEmpty(file));
  std::string error;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->status, RunStatus::kComplete);
  EXPECT_EQ(run->source, "fabtrack-allreduce");
  EXPECT_EQ(run->backend, "mpi");
  EXPECT_EQ(run->ranks, 2);
  EXPECT_EQ(run->nodes, 1);
  EXPECT_EQ(run->tags.at("night"), "7");
  EXPECT_NE(run->command_line->find("--output"), std::string::npos);
  // mpirun's plumbing (job ids, daemon URIs, the per-job transport key) is
  // not a setting and is not kept; the launch did set it.
  for (const auto& [name, value] : run->nccl_env) {
    EXPECT_NE(name.rfind("OMPI_MCA_orte_", 0), 0u) << name;
    EXPECT_NE(name.rfind("OMPI_MCA_ess", 0), 0u) << name;
  }
  // The node's facts (core/node_facts.h): at least its kernel, as uname says.
  struct utsname uts {};
  ASSERT_EQ(uname(&uts), 0);
  EXPECT_EQ(run->node_facts.at("kernel"), uts.release);
  EXPECT_EQ(run->parameters.count("timing"), 0u) << "MPI calls have one timing method";
  ASSERT_EQ(run->results.size(), 2u);                  // 1K, 4K
  EXPECT_EQ(run->latency_samples.size(), 2u * 2 * 7);  // sizes x placements x iters
  EXPECT_EQ(run->rank_timings.size(), 2u * 2 * 2);     // sizes x placements x ranks
  const LatencySummary& l = run->results[0].latency;
  ASSERT_TRUE(l.p50_us && l.p99_us && l.cv);
  EXPECT_LE(*l.p50_us, *l.p99_us);
  ASSERT_TRUE(l.straggler_rank.has_value());
  EXPECT_TRUE(*l.straggler_rank == 0 || *l.straggler_rank == 1);
  EXPECT_GE(*l.straggler_excess_us, 0);
  EXPECT_TRUE(run->oob_ok.value_or(false));
  // `fabtrack parse` shows the result file like any nccl-tests output.
  ParsedFile parsed = ParsePath(file);
  ASSERT_EQ(parsed.tests.size(), 1u);
  EXPECT_EQ(parsed.tests[0].collective, "all_reduce");
  EXPECT_EQ(parsed.tests[0].rows.size(), 2u);
  EXPECT_TRUE(parsed.tests[0].complete);
  std::filesystem::remove(file);
}

TEST(AllreduceMpiTest, StoresIntoTheDatabase) {
  TestDatabase db;
  Result r = MpiRun(2, "-b 8 -e 512 -f 8 -n 5 -w 1 -q --cluster ci --db '" + db.conninfo() + "'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stored run"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT status || '/' || ranks || '/' || backend FROM runs"),
            "complete/2/mpi");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "3");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM latency_samples"), "30");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM rank_timings"), "12");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_ranks"), "2");
  EXPECT_EQ(
      db.Scalar("SELECT bool_and(oop_wrong = 0 AND lat_p99_us >= lat_p50_us) FROM run_results"),
      "t");
  EXPECT_EQ(db.Scalar("SELECT ended_at > started_at FROM runs"), "t");
  // Both ranks on this machine (one boot id), each seeing its CPUs.
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  EXPECT_EQ(db.Scalar("SELECT machines || '/' || max_ranks_per_machine FROM runs"), "1/2");
  EXPECT_EQ(db.Scalar("SELECT cpus_per_machine FROM runs"), std::to_string(cpus));
  EXPECT_EQ(db.Scalar("SELECT oversubscribed FROM runs"), cpus < 2 ? "t" : "f");
}

// Step mode with real ranks: the same gradients either hide behind a long
// backward pass or are mostly exposed after a short one; stored and written.
TEST(AllreduceMpiTest, StepModeMeasuresExposedCommunication) {
  TestDatabase db;
  std::string file = TempPath("step") + ".json";
  const std::string model = "--step --model-params 10M --grad-dtype fp32 --bucket 4M ";
  Result hidden = MpiRun(2, model + "--backward-ms 300 --steps 4 --warmup-steps 1 --output " +
                                file + " --cluster ci --db '" + db.conninfo() + "'");
  ASSERT_EQ(hidden.exit_code, 0) << hidden.err;
  EXPECT_NE(hidden.out.find("in 10 buckets of 4194304 bytes"), std::string::npos) << hidden.out;
  Result exposed = MpiRun(2, model +
                                 "--backward-ms 1 --steps 4 --warmup-steps 1 -q --cluster ci "
                                 "--db '" +
                                 db.conninfo() + "'");
  ASSERT_EQ(exposed.exit_code, 0) << exposed.err;

  nlohmann::json doc = nlohmann::json::parse(ReadFileOrEmpty(file));
  std::string error;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &error);
  ASSERT_TRUE(run && run->step) << error;
  EXPECT_EQ(run->collective, "ddp_step");
  EXPECT_EQ(run->step->grad_bytes, 40'000'000);
  EXPECT_EQ(run->step->buckets, 10);
  ASSERT_EQ(run->step_samples.size(), 4u);
  for (const StepSample& s : run->step_samples) {
    EXPECT_GE(s.compute_ms, 300 * 0.99);  // the backward pass ran its time
    EXPECT_NEAR(s.step_ms, s.compute_ms + s.exposed_ms, 0.05 * s.step_ms);
  }
  // 40 MB over loopback TCP takes tens of ms: hidden behind 300 ms of compute,
  // exposed after 1 ms.
  EXPECT_LT(run->step->idle_share_p50, 0.2);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM step_results"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM step_samples"), "8");
  EXPECT_EQ(db.Scalar("SELECT bool_and(collective = 'ddp_step' AND status = 'complete') FROM runs"),
            "t");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM step_results WHERE backward_ms = 1 AND "
                      "idle_share_p50 > 0.5 AND exposed_ms_p50 > 5"),
            "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "0");
  std::filesystem::remove(file);
}

// More ranks than this machine has CPUs: recorded, and said in the table.
TEST(AllreduceMpiTest, OversubscriptionIsRecordedAndShown) {
  const int cpus = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  const int ranks = cpus + 1;
  std::string file = TempPath("oversubscribed") + ".json";
  Result r = MpiRun(ranks, "-b 8 -e 8 -n 3 -w 1 --link-probe 0 --output " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("#  Oversubscribed: " + std::to_string(ranks) + " ranks on " +
                       std::to_string(cpus) + " CPUs of one machine"),
            std::string::npos)
      << r.out;
  nlohmann::json doc = nlohmann::json::parse(ReadFileOrEmpty(file));
  EXPECT_EQ(doc["run"]["machines"], 1);
  EXPECT_EQ(doc["run"]["max_ranks_per_machine"], ranks);
  EXPECT_EQ(doc["run"]["cpus_per_machine"], cpus);
  ParsedFile parsed = ParseText(r.out, "stdout");  // the extra header line is a comment
  ASSERT_EQ(parsed.tests.size(), 1u) << r.out;
  EXPECT_TRUE(parsed.errors.empty()) << parsed.errors[0].message;
  EXPECT_EQ(parsed.tests[0].rows.size(), 1u);
  std::filesystem::remove(file);
}

TEST(AllreduceMpiTest, BadFlagsFailBeforeAnyWork) {
  struct Case {
    const char* args;
    const char* message;
  } cases[] = {
      {"-b 1M -e 1K", "-e 1024 is smaller than -b 1048576"},
      {"-b 8X", "-b 8X: not a size"},
      {"-d half", "-d half"},
      {"-o avg", "-o avg"},
      {"-n 0", "-n 0"},
      // Without CUDA/NCCL built in: "--backend nccl: ... built without CUDA/NCCL";
      // built in but no GPU here: "NCCL backend: cudaGetDeviceCount: ...".
      {"--backend nccl", "CCL"},
      {"-c 2", "-c 2"},
      {"--tag oops", "--tag oops"},
      {"--no-such-flag", "no-such-flag"},
      {"--step --backward-ms 10", "--model-params: required"},
      {"--step --model-params 7Q --backward-ms 10", "--model-params 7Q"},
      {"--step --model-params 1M", "--backward-ms"},
      {"--step --model-params 1M --backward-ms 5 --grad-dtype int8", "--grad-dtype int8"},
      {"--model-params 1M", "--model-params: only with --step"},
      {"-g 8", "-g 8: fabtrack-allreduce drives one device per rank"},
      {"-t 2", "-t 2: fabtrack-allreduce drives one device per rank"},
      {"-a 4", "-a 4: expected 0 (rank 0)"},
      {"-N 0", "-N 0: at least one cycle"},
  };
  // Independent runs, each mostly MPI start-up: four at a time, checked in
  // order (one after another they took most of a minute).
  constexpr size_t kAtOnce = 4;
  const size_t n = std::size(cases);
  std::vector<std::future<Result>> runs(n);
  auto start = [&](size_t i) {
    runs[i] = std::async(std::launch::async, [args = cases[i].args] { return MpiRun(2, args); });
  };
  for (size_t i = 0; i < std::min(kAtOnce, n); ++i) start(i);
  for (size_t i = 0; i < n; ++i) {
    const Case& c = cases[i];
    Result r = runs[i].get();
    if (i + kAtOnce < n) start(i + kAtOnce);
    EXPECT_EQ(r.exit_code, 2) << c.args << "\n" << r.err;
    EXPECT_NE(r.err.find(c.message), std::string::npos) << c.args << "\n" << r.err;
    EXPECT_EQ(r.out.find("out-of-place"), std::string::npos) << "no table for " << c.args;
  }
}

// nccl-tests' -a, -N, -g 1 and -t 1 with nccl-tests' meaning: -N 3 prints
// every cycle's rows in the one table, as nccl-tests does, and the result
// file keeps the last cycle; -a 3 reports the slowest rank's mean, which is
// at least the average's.
TEST(AllreduceMpiTest, NcclTestsCyclesAndRankTimeFlags) {
  const std::string file = TempPath("cycles.json");
  Result r = MpiRun(2, "-g 1 -t 1 -N 3 -a 3 -b 8 -e 4K -f 8 -n 5 -w 1 --output " + file);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ParsedFile parsed = ParseText(r.out, "stdout");
  ASSERT_EQ(parsed.tests.size(), 1u) << r.out;
  ASSERT_EQ(parsed.tests[0].rows.size(), 12u) << r.out;  // 8, 64, 512, 4K, three times
  std::ifstream in(file);
  std::string why;
  auto run = RunRecordFromJson(nlohmann::json::parse(in), &why);
  ASSERT_TRUE(run) << why;
  EXPECT_EQ(run->results.size(), 4u);
  EXPECT_EQ(run->parameters.at("cycles"), "3");
  EXPECT_EQ(run->parameters.at("average"), "3");
  // The slowest rank's mean: every rank's mean is in rank_timings.
  for (const ResultRow& row : run->results) {
    double slowest = 0;
    for (const RankTiming& t : run->rank_timings) {
      if (!t.in_place && run->results[t.row_index].row.size_bytes == row.row.size_bytes) {
        slowest = std::max(slowest, t.mean_us.value_or(0));
      }
    }
    EXPECT_NEAR(*row.row.oop->time_us, slowest, 1e-6 + slowest * 1e-9) << row.row.size_bytes;
  }
  std::filesystem::remove(file);
}

TEST(AllreduceMpiTest, UnreachableDatabaseFailsBeforeWork) {
  Result r = MpiRun(2, "-b 8 -e 8 --cluster ci --db 'host=/nonexistent dbname=x'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("cannot connect"), std::string::npos) << r.err;
}

TEST(AllreduceMpiTest, RankDyingMidRunLeavesMeasuredSizesAsPartial) {
  TestDatabase db;
  std::string file = TempPath("partial") + ".json";
  Result r = MpiRun(2,
                    "-b 8 -e 32K -f 4 -n 5 -w 1 -q --fault-exit-after-sizes 3 --fault-rank 1 "
                    "--cluster ci --output " +
                        file + " --db '" + db.conninfo() + "'");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_EQ(db.Scalar("SELECT status FROM runs"), "partial");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "3");
  EXPECT_EQ(db.Scalar("SELECT ended_at IS NULL FROM runs"), "t");
  std::string error;
  auto run = RunRecordFromJson(nlohmann::json::parse(ReadFileOrEmpty(file)), &error);
  ASSERT_TRUE(run) << error;
  EXPECT_EQ(run->status, RunStatus::kPartial);
  EXPECT_EQ(run->results.size(), 3u);
  std::filesystem::remove(file);
}

}  // namespace
}  // namespace fabtrack
