// `fabtrack sweep --bench nccl-tests` end to end: the real fabtrack binary
// launches nccl-tests programs through real mpirun ranks and stores what they
// printed in a real PostgreSQL. Without a GPU the programs are stand-ins
// (tests/fixtures/fake_nccl_tests) that print the recorded outputs of
// nccl-tests 2.19.6 and write its -J report; everything around them is real.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::TestDatabase;

const std::string kPrograms = std::string(FABTRACK_FIXTURE_DIR) + "/fake_nccl_tests/bin";

class SweepNcclTests : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "/sweep_nccl_tests_" + std::to_string(getpid());
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
    args_file_ = dir_ + "/args.txt";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // `fabtrack sweep --bench nccl-tests` with the stand-ins; `env` goes
  // before the command (FAKE_NCCL_TESTS_* settings).
  CommandOutput Sweep(const std::string& args, const std::string& env = "") {
    return fabtrack::testing::RunCommand(
        "env FAKE_NCCL_TESTS_ARGS=" + args_file_ + " " + env + " " + FABTRACK_CLI +
        " sweep --cluster lab --ports off --bench nccl-tests --nccl-tests-dir " + kPrograms +
        " --output-dir " + dir_ + "/out --db '" + db_.conninfo() + "' " + args);
  }
  std::string Args() const { return fabtrack::testing::ReadFileOrEmpty(args_file_); }

  TestDatabase db_;
  std::string dir_, args_file_;
};

TEST_F(SweepNcclTests, EveryCollectiveAtEveryNodeCountIsStored) {
  CommandOutput r = Sweep("--nodes 1-2 --collective all_reduce,all_gather -- -b 8 -e 128M -f 8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("nccl-tests all_reduce all_gather (-J reports)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("4 of 4 runs stored"), std::string::npos) << r.out;
  EXPECT_EQ(db_.Scalar("SELECT string_agg(collective || ':' || nodes || ':' || ranks || ':' || "
                       "source || ':' || nccl_tests_version || ':' || status, ',' ORDER BY nodes, "
                       "collective) FROM runs"),
            "all_gather:1:1:nccl-tests:2.19.6:complete,all_reduce:1:1:nccl-tests:2.19.6:complete,"
            "all_gather:2:2:nccl-tests:2.19.6:complete,all_reduce:2:2:nccl-tests:2.19.6:complete");
  EXPECT_EQ(db_.Scalar("SELECT count(DISTINCT sweep_id) FROM runs"), "1");
  // The 2-rank all_reduce's NCCL log (rank 0's stdout under mpirun) says
  // Socket: the fallback is on record for the analyzer.
  EXPECT_EQ(db_.Scalar("SELECT coalesce(network, '-') FROM runs WHERE nodes = 2 AND collective "
                       "= 'all_reduce'"),
            "Socket");
  EXPECT_EQ(db_.Scalar("SELECT tags->>'local_sweep' FROM runs WHERE nodes = 2 AND collective = "
                       "'all_gather'"),
            "one host");
  // Numbers from the -J report, not the printed 2-decimal table (1.19).
  const double busbw = std::stod(
      db_.Scalar("SELECT r.oop_busbw_gbps FROM run_results r JOIN runs u ON u.id = r.run_id WHERE "
                 "u.nodes = 2 AND u.collective = 'all_reduce' AND r.size_bytes = 134217728"));
  EXPECT_NEAR(busbw, 1.19, 0.005);
  EXPECT_NE(busbw, 1.19);
  // 14 sizes in the H200 recordings (1 node), 9 in the 2-node outputs.
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM run_results"), "46");
  // The user's flags reached the programs as typed, each with its own -J.
  const std::string args = Args();
  EXPECT_NE(args.find("all_gather_perf -b 8 -e 128M -f 8 -J " + dir_ + "/out/"), std::string::npos)
      << args;
  EXPECT_NE(args.find("all_reduce_perf -h"), std::string::npos) << args;  // the -J probe
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM runs WHERE command_line LIKE 'mpirun -np %'"), "4");
}

// nccl-tests before 2.17 has no -J: the printed tables are stored.
TEST_F(SweepNcclTests, ProgramsWithoutJsonReportsStoreThePrintedTable) {
  CommandOutput r = Sweep("--nodes 2 -- -b 8 -e 128M -f 8", "FAKE_NCCL_TESTS_OLD=1");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("(printed tables)"), std::string::npos) << r.out;
  EXPECT_EQ(Args().find("-J"), std::string::npos) << Args();
  EXPECT_EQ(db_.Scalar("SELECT r.oop_busbw_gbps FROM run_results r WHERE r.size_bytes = "
                       "134217728"),
            "1.19");
}

// Built without MPI, each of mpirun's processes runs its own 1-rank job:
// the 2-node run is not stored as one, and the sweep says why and fails.
TEST_F(SweepNcclTests, ProgramBuiltWithoutMpiIsNotStoredAsAMultiNodeRun) {
  CommandOutput r = Sweep("--nodes 1-2 -- -b 8 -e 128M -f 8", "FAKE_NCCL_TESTS_NO_MPI=1");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // kExitInputError
  EXPECT_NE(r.err.find(".nodes2.all_reduce.txt:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("1 rank(s) where the sweep launched 2"), std::string::npos) << r.err;
  EXPECT_EQ(db_.Scalar("SELECT string_agg(nodes::text, ',') FROM runs"), "1");
}

TEST_F(SweepNcclTests, FailedCheckIsStoredAsAFailedRun) {
  CommandOutput r = Sweep("--nodes 1 -- -b 8 -e 128M -f 8", "FAKE_NCCL_TESTS_EXIT=1");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // kExitInputError
  EXPECT_EQ(db_.Scalar("SELECT status FROM runs"), "failed");
}

// A single-node GPU box without MPI: the program is the whole command.
TEST_F(SweepNcclTests, WithoutLauncherTheProgramRunsAlone) {
  CommandOutput r = Sweep("--no-launcher --nodes 1 --collective all_gather -- -b 8 -e 128M -f 8");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(db_.Scalar("SELECT split_part(command_line, ' ', 1) FROM runs"),
            kPrograms + "/all_gather_perf");
  EXPECT_EQ(Sweep("--no-launcher --nodes 1-2").exit_code, 2);
}

// "all": every nccl-tests program in the folder (the H200 recordings of six
// collectives), NAME_SUFFIX=_mpi builds too; one that prints nothing usable
// fails the sweep, naming its output, and the others are stored.
TEST_F(SweepNcclTests, AllCollectivesInTheFolder) {
  CommandOutput r = Sweep("--nodes 1 --collective all -- -b 8 -e 128M -f 8");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;  // kExitInputError
  EXPECT_NE(r.out.find("nccl-tests all_gather all_reduce alltoall broadcast gather reduce_scatter "
                       "sendrecv"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.err.find(".nodes1.gather.txt:1: nccl-tests printed neither a result table nor NCCL "
                       "log lines"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(db_.Scalar("SELECT string_agg(collective, ',' ORDER BY collective) FROM runs"),
            "all_gather,all_reduce,alltoall,broadcast,reduce_scatter,sendrecv");
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM runs WHERE status = 'complete'"), "6");
  EXPECT_NE(Args().find("gather_perf_mpi -b 8"), std::string::npos) << Args();
}

TEST_F(SweepNcclTests, UsageErrorsNameWhatIsWrong) {
  CommandOutput r = Sweep("--nodes 1 --collective scatter");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(kPrograms + "/scatter_perf: no such program"), std::string::npos) << r.err;
  r = Sweep("--nodes 1 --collective allreduce,bogus");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--collective bogus: not an nccl-tests collective"), std::string::npos)
      << r.err;
  r = Sweep("--nodes 1 -- -b 8 -J mine.json");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("the sweep sets -J itself"), std::string::npos) << r.err;
  r = fabtrack::testing::RunCommand(
      std::string(FABTRACK_CLI) + " sweep --cluster lab --nodes 1 --collective all_gather --db '" +
      db_.conninfo() + "'");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("needs --bench nccl-tests"), std::string::npos) << r.err;
  EXPECT_EQ(db_.Scalar("SELECT count(*) FROM runs"), "0");
}

}  // namespace
}  // namespace fabtrack
