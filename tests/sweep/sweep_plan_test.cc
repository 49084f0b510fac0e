#include "collector/sweep/sweep_plan.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace fabtrack::sweep {
namespace {

bool Has(const std::vector<std::string>& argv, const std::vector<std::string>& seq) {
  return std::search(argv.begin(), argv.end(), seq.begin(), seq.end()) != argv.end();
}

TEST(ParseNodeCountsTest, ListsRangesAndPowersOfTwo) {
  EXPECT_EQ(ParseNodeCounts("1,2,4"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(ParseNodeCounts("4, 1,2,2"), (std::vector<int>{1, 2, 4}));
  EXPECT_EQ(ParseNodeCounts("1-4"), (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(ParseNodeCounts("pow2:16"), (std::vector<int>{1, 2, 4, 8, 16}));
  EXPECT_EQ(ParseNodeCounts("pow2:12"), (std::vector<int>{1, 2, 4, 8, 12}));
  for (const char* bad : {"", "0", "-1", "a", "4-1", "1,,x", "pow2:", "1-999999"}) {
    EXPECT_EQ(ParseNodeCounts(bad), std::nullopt) << bad;
  }
}

TEST(ParseHostfileTest, OpenMpiAndMpichForms) {
  EXPECT_EQ(ParseHostfile("# cluster\nnode1 slots=8\nnode2:8\n\n  node3  \nnode1 slots=8\n"),
            (std::vector<std::string>{"node1", "node2", "node3"}));
}

SweepSpec Spec(Launcher launcher) {
  SweepSpec s;
  s.launcher = launcher;
  s.node_counts = {1, 2, 4};
  s.ranks_per_node = 2;
  s.allreduce = "/opt/fabtrack/bin/fabtrack-allreduce";
  s.harness_args = {"-b", "8", "-e", "1G", "-f", "2"};
  s.sweep_id = "S1";
  s.output_dir = "/shared/out";
  s.hostfile_dir = "/shared/out";
  s.tags = {"night=3"};
  return s;
}

TEST(PlanSweepTest, SlurmUsesSrunPerNodeCount) {
  std::vector<PlannedRun> runs = PlanSweep(Spec(Launcher::kSlurm));
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[2].nodes, 4);
  EXPECT_EQ(runs[2].ranks, 8);
  EXPECT_TRUE(Has(runs[2].argv, {"srun", "-N", "4", "--ntasks-per-node", "2",
                                 "/opt/fabtrack/bin/fabtrack-allreduce", "-b", "8"}));
  EXPECT_TRUE(Has(runs[2].argv, {"--sweep-id", "S1"}));
  EXPECT_TRUE(Has(runs[2].argv, {"--tag", "night=3"}));
  EXPECT_TRUE(Has(runs[2].argv, {"--output", "/shared/out/S1.nodes4.json"}));
  EXPECT_EQ(runs[2].output_file, "/shared/out/S1.nodes4.json");
  // No database credentials on any command line.
  for (const auto& run : runs) {
    EXPECT_FALSE(Has(run.argv, {"--db"}));
  }
}

TEST(PlanSweepTest, HostfileTakesTheFirstKHosts) {
  SweepSpec s = Spec(Launcher::kHostfile);
  s.hosts = {"a", "b", "c", "d", "e"};
  s.as_root = true;
  std::vector<PlannedRun> runs = PlanSweep(s);
  EXPECT_EQ(runs[1].hostfile_lines, (std::vector<std::string>{"a slots=2", "b slots=2"}));
  EXPECT_TRUE(Has(runs[1].argv, {"mpirun", "-np", "4", "--hostfile", "/shared/out/hostfile.S1.2",
                                 "--map-by", "ppr:2:node", "--allow-run-as-root"}));
  s.hosts = {"a", "b"};
  EXPECT_NE(ValidateSpec(s).find("hostfile lists 2"), std::string::npos);
}

TEST(PlanSweepTest, LocalAndCustomLaunchers) {
  std::vector<PlannedRun> local = PlanSweep(Spec(Launcher::kLocal));
  EXPECT_TRUE(Has(local[0].argv, {"mpirun", "-np", "2", "--oversubscribe"}));
  EXPECT_TRUE(Has(local[0].argv, {"--mca", "btl", "self,tcp"}));
  SweepSpec custom = Spec(Launcher::kCustom);
  custom.custom_prefix = {"scripts/netns-fabric.sh", "mpirun", "--"};
  std::vector<PlannedRun> runs = PlanSweep(custom);
  EXPECT_TRUE(Has(runs[1].argv, {"scripts/netns-fabric.sh", "mpirun", "--", "-np", "4"}));
  custom.custom_prefix.clear();
  EXPECT_NE(ValidateSpec(custom), "");
}

// Port counters bracket each run on every node: one sampler per node through
// the run's own launcher.
TEST(PlanSweepTest, PortSamplingRunsOnePerNodeOfTheRun) {
  const std::vector<std::string> snapshot = {"/opt/fabtrack/bin/fabtrack",
                                             "counters",
                                             "snapshot",
                                             "--format",
                                             "json",
                                             "--sysfs",
                                             "/sys",
                                             "--output",
                                             "/shared/out/p.{host}.json"};
  auto plan = [&](const SweepSpec& s, int i) {
    return PlanPortSampling(s, PlanSweep(s)[i], "/opt/fabtrack/bin/fabtrack", "/sys",
                            "/shared/out/p.{host}.json");
  };
  std::vector<std::string> slurm = plan(Spec(Launcher::kSlurm), 2);
  EXPECT_TRUE(Has(slurm, {"srun", "-N", "4", "--ntasks-per-node", "1"}));
  EXPECT_TRUE(Has(slurm, snapshot));

  SweepSpec hostfile = Spec(Launcher::kHostfile);
  hostfile.hosts = {"a", "b", "c", "d"};
  EXPECT_TRUE(Has(plan(hostfile, 1), {"mpirun", "-np", "2", "--hostfile",
                                      "/shared/out/hostfile.S1.2", "--map-by", "ppr:1:node"}));

  SweepSpec custom = Spec(Launcher::kCustom);
  custom.custom_prefix = {"scripts/netns-fabric.sh", "mpirun", "--"};
  EXPECT_TRUE(Has(plan(custom, 2), {"--", "-np", "4", "--map-by", "ppr:1:node"}));

  EXPECT_EQ(plan(Spec(Launcher::kLocal), 2), snapshot);  // one host: sample it once, here
}

// --hw-counters reaches every node's snapshot; the default adds nothing, so
// the command stays one that older fabtracks on the nodes accept.
TEST(PlanSweepTest, PortSamplingPassesTheHwCounterSelection) {
  const SweepSpec slurm = Spec(Launcher::kSlurm);
  auto plan = [&](const std::string& hw) {
    return PlanPortSampling(slurm, PlanSweep(slurm)[1], "/opt/fabtrack/bin/fabtrack", "/sys",
                            "/shared/out/p.{host}.json", hw);
  };
  const std::vector<std::string> none = plan("none");
  EXPECT_TRUE(Has(none, {"snapshot", "--format", "json", "--sysfs", "/sys", "--output",
                         "/shared/out/p.{host}.json", "--hw-counters", "none"}));
  EXPECT_EQ(none.back(), "none");
  EXPECT_TRUE(
      Has(plan("np_cnp_sent,out_of_buffer"), {"--hw-counters", "np_cnp_sent,out_of_buffer"}));
  const std::vector<std::string> all = plan("all");
  EXPECT_EQ(std::count(all.begin(), all.end(), "--hw-counters"), 0);
  EXPECT_EQ(all.back(), "/shared/out/p.{host}.json");
}

// The CPU bracket: `counters cpu` once per node through the run's launcher,
// each node writing its own file.
TEST(PlanSweepTest, CpuSamplingIsOneCountersCpuPerNode) {
  const std::vector<std::string> sample = {"/opt/fabtrack/bin/fabtrack", "counters", "cpu",
                                           "--output", "/shared/out/c.{host}.json"};
  auto plan = [&](const SweepSpec& s, size_t i) {
    return PlanCpuSampling(s, PlanSweep(s)[i], "/opt/fabtrack/bin/fabtrack",
                           "/shared/out/c.{host}.json");
  };
  std::vector<std::string> slurm = plan(Spec(Launcher::kSlurm), 2);
  EXPECT_TRUE(Has(slurm, {"srun", "-N", "4", "--ntasks-per-node", "1"}));
  EXPECT_TRUE(Has(slurm, sample));
  SweepSpec custom = Spec(Launcher::kCustom);
  custom.custom_prefix = {"scripts/netns-fabric.sh", "mpirun", "--"};
  EXPECT_TRUE(Has(plan(custom, 1), {"--", "-np", "2", "--map-by", "ppr:1:node"}));
  EXPECT_EQ(plan(Spec(Launcher::kLocal), 2), sample);
}

// locate's rounds: one rank on each host of the round, exactly those.
TEST(PlanProbeRound, OneRankOnEachHostThroughTheLauncher) {
  const std::vector<std::string> hosts = {"n1", "n2", "n5", "n6"};
  const std::vector<std::string> tail = {"/opt/fabtrack-pairprobe", "--pairs", "n1:n5,n2:n6"};
  auto plan = [&](const SweepSpec& s) {
    return PlanProbeRound(s, hosts, tail[0], {tail[1], tail[2]});
  };
  auto ends_with_tail = [&](const std::vector<std::string>& argv) {
    return argv.size() >= tail.size() && std::equal(tail.begin(), tail.end(), argv.end() - 3);
  };
  std::vector<std::string> slurm = plan(Spec(Launcher::kSlurm));
  EXPECT_TRUE(Has(slurm, {"srun", "-N", "4", "-n", "4", "--nodelist=n1,n2,n5,n6"}));
  EXPECT_TRUE(ends_with_tail(slurm));

  SweepSpec hostfile = Spec(Launcher::kHostfile);
  hostfile.as_root = true;
  std::vector<std::string> mpirun = plan(hostfile);
  EXPECT_TRUE(Has(mpirun, {"mpirun", "-np", "4", "--host", "n1,n2,n5,n6", "--map-by", "ppr:1:node",
                           "--allow-run-as-root"}));
  EXPECT_TRUE(ends_with_tail(mpirun));

  SweepSpec custom = Spec(Launcher::kCustom);
  custom.custom_prefix = {"scripts/netns-fabric.sh", "mpirun", "--"};
  EXPECT_TRUE(Has(plan(custom), {"--", "-np", "4", "--host", "n1,n2,n5,n6"}));

  EXPECT_TRUE(plan(Spec(Launcher::kLocal)).empty());
}

// nccl-tests as the sweep's benchmark: one run per program per node count,
// the launcher the same as fabtrack-allreduce's, the user's flags passed
// through as typed, -J added when the programs write reports.
TEST(PlanSweepTest, NcclTestsRunsEveryProgramAtEveryNodeCount) {
  SweepSpec s = Spec(Launcher::kSlurm);
  s.benchmark = Benchmark::kNcclTests;
  s.allreduce.clear();
  s.nccl_tests = {{"all_reduce", "/opt/nt/all_reduce_perf"},
                  {"all_gather", "/opt/nt/all_gather_perf"}};
  s.nccl_tests_json = true;
  s.harness_args = {"-b", "8", "-e", "1G", "-f", "2", "-g", "2"};
  ASSERT_EQ(ValidateSpec(s), "");
  std::vector<PlannedRun> runs = PlanSweep(s);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[0].collective, "all_reduce");
  EXPECT_EQ(runs[1].collective, "all_gather");
  EXPECT_EQ(runs[5].nodes, 4);
  EXPECT_EQ(runs[5].ranks, 8);            // processes: 4 nodes x 2 per node
  EXPECT_EQ(runs[5].expected_ranks, 16);  // each drives 2 GPUs (-g 2)
  EXPECT_EQ(runs[1].argv,
            (std::vector<std::string>{"srun", "-N", "1", "--ntasks-per-node", "2",
                                      "/opt/nt/all_gather_perf", "-b", "8", "-e", "1G", "-f", "2",
                                      "-g", "2", "-J", "/shared/out/S1.nodes1.all_gather.json"}));
  EXPECT_EQ(runs[1].transcript_file, "/shared/out/S1.nodes1.all_gather.txt");
  EXPECT_EQ(runs[1].output_file, std::nullopt);
  // fabtrack-allreduce's own flags do not reach nccl-tests.
  EXPECT_FALSE(Has(runs[1].argv, {"--sweep-id"}));
  EXPECT_FALSE(Has(runs[1].argv, {"--output"}));
  s.nccl_tests_json = false;
  EXPECT_FALSE(Has(PlanSweep(s)[0].argv, {"-J"}));
  EXPECT_EQ(PlanSweep(s)[0].json_file, std::nullopt);
}

TEST(PlanSweepTest, NcclTestsFlagsTheSweepOwnsAreRefused) {
  SweepSpec s = Spec(Launcher::kLocal);
  s.benchmark = Benchmark::kNcclTests;
  s.nccl_tests = {{"all_reduce", "/opt/nt/all_reduce_perf"}};
  s.harness_args = {"-b", "8", "-J", "mine.json"};
  EXPECT_NE(ValidateSpec(s).find("-J"), std::string::npos);
  s.harness_args = {"--output_file=mine.json"};
  EXPECT_NE(ValidateSpec(s).find("--output_file"), std::string::npos);
  s.harness_args = {"-g", "zero"};
  EXPECT_NE(ValidateSpec(s).find("-g/-t"), std::string::npos);
  s.nccl_tests.clear();
  s.harness_args.clear();
  EXPECT_NE(ValidateSpec(s), "");
}

TEST(NcclTestsRanksPerProcessTest, EveryFlagSpelling) {
  EXPECT_EQ(NcclTestsRanksPerProcess({}), 1);
  EXPECT_EQ(NcclTestsRanksPerProcess({"-b", "8", "-g", "8"}), 8);
  EXPECT_EQ(NcclTestsRanksPerProcess({"-g4", "-t", "2"}), 8);
  EXPECT_EQ(NcclTestsRanksPerProcess({"--ngpus", "2", "--nthreads=3"}), 6);
  EXPECT_EQ(NcclTestsRanksPerProcess({"-g", "2", "-g", "4"}), 4);  // the last one wins
  EXPECT_EQ(NcclTestsRanksPerProcess({"-g"}), std::nullopt);
  EXPECT_EQ(NcclTestsRanksPerProcess({"-g", "0"}), std::nullopt);
  EXPECT_EQ(NcclTestsRanksPerProcess({"-t", "x"}), std::nullopt);
}

// Without a launcher the program is the whole command, on this node only.
TEST(PlanSweepTest, DirectLaunchRunsTheProgramItselfOnOneNode) {
  SweepSpec s = Spec(Launcher::kDirect);
  s.ranks_per_node = 1;
  EXPECT_NE(ValidateSpec(s).find("--nodes 1"), std::string::npos);
  s.node_counts = {1};
  ASSERT_EQ(ValidateSpec(s), "");
  s.benchmark = Benchmark::kNcclTests;
  s.nccl_tests = {{"all_reduce", "/opt/nt/all_reduce_perf"}};
  s.harness_args = {"-g", "8"};
  std::vector<PlannedRun> runs = PlanSweep(s);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].argv, (std::vector<std::string>{"/opt/nt/all_reduce_perf", "-g", "8"}));
  EXPECT_EQ(runs[0].expected_ranks, 8);
  s.ranks_per_node = 2;
  EXPECT_NE(ValidateSpec(s), "");
}

TEST(AbSettingTest, VariablesAndNcclLibraryDirectories) {
  std::string why;
  std::optional<AbSetting> env = ParseAbSetting("OMPI_MCA_btl_tcp_eager_limit=4096", &why);
  ASSERT_TRUE(env) << why;
  EXPECT_EQ(env->name, "OMPI_MCA_btl_tcp_eager_limit");
  EXPECT_EQ(env->value, "4096");
  EXPECT_EQ(
      AbRankEnvironment(*env, "/usr/lib"),
      (std::vector<std::pair<std::string, std::string>>{{"OMPI_MCA_btl_tcp_eager_limit", "4096"}}));
  EXPECT_EQ(ParseAbSetting("NCCL_ALGO=", &why)->value, "");  // set, empty
  std::optional<AbSetting> lib = ParseAbSetting("nccl-lib=/opt/nccl-2.21/lib", &why);
  ASSERT_TRUE(lib && lib->nccl_lib) << why;
  EXPECT_EQ(AbRankEnvironment(*lib, "/usr/local/cuda/lib64"),
            (std::vector<std::pair<std::string, std::string>>{
                {"LD_LIBRARY_PATH", "/opt/nccl-2.21/lib:/usr/local/cuda/lib64"}}));
  EXPECT_EQ(AbRankEnvironment(*lib, "")[0].second, "/opt/nccl-2.21/lib");
  for (const char* bad :
       {"NCCL_ALGO", "1X=2", "A-B=1", "=1", "nccl-lib=", "nccl-lib=/a:/b", "LD_LIBRARY_PATH=/x"}) {
    why.clear();
    EXPECT_FALSE(ParseAbSetting(bad, &why)) << bad;
    EXPECT_FALSE(why.empty()) << bad;
  }
}

TEST(AbSettingTest, OrderAlternatesWhichSideRunsFirst) {
  EXPECT_EQ(AbOrder(1), "AB");
  EXPECT_EQ(AbOrder(2), "ABBA");
  EXPECT_EQ(AbOrder(3), "ABBAAB");
}

TEST(PlanSweepTest, RankEnvironmentGoesThroughEachLauncher) {
  for (Launcher launcher :
       {Launcher::kLocal, Launcher::kHostfile, Launcher::kCustom, Launcher::kSlurm}) {
    SweepSpec s = Spec(launcher);
    s.hosts = {"n1", "n2", "n3", "n4"};
    s.custom_prefix = {"wrap", "mpirun", "--"};
    s.rank_env = {{"NCCL_ALGO", "Ring"}, {"UCX_TLS", "tcp"}};
    for (const PlannedRun& run : PlanSweep(s)) {
      const auto program = std::find(run.argv.begin(), run.argv.end(), s.allreduce);
      ASSERT_NE(program, run.argv.end());
      const std::vector<std::string> before(run.argv.begin(), program);
      if (launcher == Launcher::kSlurm) {
        EXPECT_EQ(before.back(), "--export=ALL,NCCL_ALGO=Ring,UCX_TLS=tcp");
      } else {
        EXPECT_TRUE(Has(before, {"-x", "NCCL_ALGO=Ring", "-x", "UCX_TLS=tcp"}))
            << static_cast<int>(launcher);
      }
    }
  }
  SweepSpec direct = Spec(Launcher::kDirect);
  direct.node_counts = {1};
  direct.ranks_per_node = 1;
  direct.rank_env = {{"NCCL_ALGO", "Tree"}};
  const std::vector<PlannedRun> runs = PlanSweep(direct);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(std::vector<std::string>(runs[0].argv.begin(), runs[0].argv.begin() + 3),
            (std::vector<std::string>{"env", "NCCL_ALGO=Tree", direct.allreduce}));
  SweepSpec comma = Spec(Launcher::kSlurm);
  comma.rank_env = {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}};
  EXPECT_NE(ValidateSpec(comma).find("comma"), std::string::npos);
  // Without a setting the launch is what it always was.
  SweepSpec plain = Spec(Launcher::kLocal);
  for (const PlannedRun& run : PlanSweep(plain)) EXPECT_FALSE(Has(run.argv, {"-x"}));
}

}  // namespace
}  // namespace fabtrack::sweep
