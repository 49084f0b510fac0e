// /proc text into the structs of a node's CPUs (collector/parse/proc_cpu_parser),
// a fake /proc tree read as a node (collector/counters/node_cpu), and two
// samples into the run's window (core/node_cpu.h): whole structs compared.
#include "collector/parse/proc_cpu_parser.h"

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "collector/counters/node_cpu.h"
#include "core/node_cpu.h"

namespace fabtrack {
namespace {

std::string Read(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/proc/" + name);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ProcCpuParser, StatOfAVmWithStealAndFourCpus) {
  std::string why;
  std::optional<ProcStat> stat = ParseProcStat(Read("stat_4cpu_vm.txt"), &why);
  ASSERT_TRUE(stat) << why;
  EXPECT_EQ(stat->cpus, 4);
  EXPECT_EQ(stat->times, (CpuTimes{.user = 1893417,
                                   .nice = 2210,
                                   .system = 611038,
                                   .idle = 48172934,
                                   .iowait = 20716,
                                   .irq = 0,
                                   .softirq = 18455,
                                   .steal = 92731}));
}

TEST(ProcCpuParser, OldKernelsFourFieldsReadTheRestAsZero) {
  std::string why;
  std::optional<ProcStat> stat = ParseProcStat(Read("stat_old_kernel.txt"), &why);
  ASSERT_TRUE(stat) << why;
  EXPECT_EQ(stat->cpus, 1);
  EXPECT_EQ(stat->times, (CpuTimes{.user = 40711, .nice = 12, .system = 9120, .idle = 8812345}));
}

TEST(ProcCpuParser, StatWithoutACpuLineOrWithGarbageNamesTheLine) {
  std::string why;
  EXPECT_FALSE(ParseProcStat("intr 1 2\nctxt 5\n", &why));
  EXPECT_EQ(why, "/proc/stat:1: no aggregate cpu line");
  EXPECT_FALSE(ParseProcStat("ctxt 5\ncpu  1 2 x 4\n", &why));
  EXPECT_EQ(why, "/proc/stat:2: field 3 of the cpu line is not a count: 'x'");
  EXPECT_FALSE(ParseProcStat("cpu 1 2 3\n", &why));
  EXPECT_EQ(why, "/proc/stat:1: the cpu line has fewer than 4 fields (user nice system idle)");
}

TEST(ProcCpuParser, Loadavg) {
  std::string why;
  std::optional<LoadAverage> load = ParseLoadavg(Read("loadavg_busy.txt"), &why);
  ASSERT_TRUE(load) << why;
  EXPECT_EQ(
      *load,
      (LoadAverage{.load1 = 3.87, .load5 = 2.11, .load15 = 1.04, .runnable = 5, .threads = 611}));
  EXPECT_FALSE(ParseLoadavg("3.87 2.11\n", &why));
  EXPECT_EQ(why.rfind("/proc/loadavg:1: expected", 0), 0u) << why;
  EXPECT_FALSE(ParseLoadavg("-1 2 3 1/2 5\n", &why));
  EXPECT_FALSE(ParseLoadavg("inf 2 3 1/2 5\n", &why));
}

TEST(ProcCpuParser, PidStatWhoseCommHoldsSpacesAndParentheses) {
  std::string why;
  std::optional<ProcPidStat> p = ParseProcPidStat(Read("pid_stat_spaces.txt"), &why);
  ASSERT_TRUE(p) << why;
  EXPECT_EQ(p->pid, 31337);
  EXPECT_EQ(p->comm, "my (odd) job");
  EXPECT_EQ(p->state, 'R');
  EXPECT_EQ(p->ppid, 1);
  EXPECT_EQ(p->utime, 5021);
  EXPECT_EQ(p->stime, 377);
  EXPECT_EQ(p->start_ticks, 8812001);
  EXPECT_FALSE(p->KernelThread());
  std::optional<ProcPidStat> k = ParseProcPidStat(Read("pid_stat_kthread.txt"), &why);
  ASSERT_TRUE(k) << why;
  EXPECT_TRUE(k->KernelThread());
  EXPECT_EQ(k->comm, "ksoftirqd/1");
  std::optional<ProcPidStat> odd =
      ParseProcPidStat("7 (w\xc3\x28k\ter) S 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 99 0 0", &why);
  ASSERT_TRUE(odd) << why;
  EXPECT_EQ(odd->comm, "w?(k?er");  // 0xc3 is no ASCII; 0x28 is "("
  EXPECT_FALSE(ParseProcPidStat("12 (cut) R 1 2 3", &why));
  EXPECT_FALSE(
      ParseProcPidStat("x (a) R 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20", &why));
}

// The fake tree: a 4-CPU VM where a backup agent runs; the sampler (4301)
// runs under sshd (4300), and kthreadd is a kernel thread: only the agent is
// other work.
TEST(NodeCpuReader, FakeProcTreeKeepsOtherUserProcessesOnly) {
  NodeCpuReading r = ReadNodeCpu(std::string(FABTRACK_FIXTURE_DIR) + "/proc/busy_node", 4301);
  ASSERT_EQ(r.error, "");
  EXPECT_EQ(r.sample.cpus, 4);
  EXPECT_EQ(r.sample.times.steal, 92731);
  EXPECT_EQ(r.sample.load.load1, 3.87);
  ASSERT_EQ(r.sample.processes.size(), 1u);
  EXPECT_EQ(r.sample.processes[0], (ProcessCpu{4242, 5120033, "backup-agent", 61234 + 5021}));
  NodeCpuReading missing = ReadNodeCpu("/nonexistent-proc", 1);
  EXPECT_EQ(missing.error, "cannot read /nonexistent-proc/stat");
}

NodeCpuSample Sample(int64_t busy, int64_t idle, int64_t steal, double load1,
                     std::vector<ProcessCpu> processes) {
  NodeCpuSample s;
  s.host = "node07";
  s.cpus = 4;
  s.ticks_per_second = 100;
  s.times = {.user = busy, .idle = idle, .steal = steal};
  s.load.load1 = load1;
  s.processes = std::move(processes);
  return s;
}

TEST(NodeCpuWindow, OtherWorkIsTheGrowthOfProcessesThatOutliveTheRun) {
  // 20 s on 4 CPUs: 8000 ticks. The agent grew by 3000 ticks (1.5 CPUs),
  // a job started inside the window used 200, a reused pid is another
  // process, a process that did not grow is not listed.
  NodeCpuSample before = Sample(
      10000, 50000, 100, 0.4,
      {{4242, 500, "backup-agent", 9000}, {77, 10, "old", 500}, {88, 20, "idle-daemon", 40}});
  NodeCpuSample after = Sample(
      16000, 51600, 500, 3.1,
      {{4242, 500, "backup-agent", 12000}, {77, 9000, "new", 200}, {88, 20, "idle-daemon", 40}});
  std::string why;
  std::optional<NodeCpuWindow> w = CutNodeCpuWindow(before, after, &why);
  ASSERT_TRUE(w) << why;
  EXPECT_EQ(*w, (NodeCpuWindow{.host = "node07",
                               .seconds = 20,
                               .cpus = 4,
                               .busy_fraction = 1 - 1600.0 / 8000,
                               .steal_fraction = 400.0 / 8000,
                               .other_cpus = 3200.0 / 100 / 20,
                               .load1_before = 0.4,
                               .load1_after = 3.1,
                               .top_others = {{"backup-agent", 30}, {"new", 2}}}));
  EXPECT_TRUE(NodeCpuBusy(*w));
  EXPECT_EQ(DescribeNodeCpu(*w),
            "1.6 of 4 CPUs on other work (backup-agent 30.0 CPU-s, new 2.0 CPU-s), 5% stolen, "
            "load 0.4 -> 3.1 over 20 s");
  std::optional<NodeCpuWindow> back = NodeCpuWindowFromJson(NodeCpuWindowToJson(*w), &why);
  ASSERT_TRUE(back) << why;
  EXPECT_EQ(*back, *w);
  std::optional<NodeCpuSample> sample = NodeCpuSampleFromJson(NodeCpuSampleToJson(after), &why);
  ASSERT_TRUE(sample) << why;
  EXPECT_EQ(*sample, after);
}

TEST(NodeCpuWindow, QuietNodeIsNotBusyAndStealAloneMakesItBusy) {
  NodeCpuSample before = Sample(10000, 50000, 0, 0.1, {{9, 1, "sshd", 100}});
  NodeCpuSample after = Sample(14000, 54000, 0, 1.0, {{9, 1, "sshd", 140}});
  std::string why;
  std::optional<NodeCpuWindow> quiet = CutNodeCpuWindow(before, after, &why);
  ASSERT_TRUE(quiet) << why;
  EXPECT_NEAR(quiet->other_cpus, 0.02, 1e-12);
  EXPECT_FALSE(NodeCpuBusy(*quiet));
  NodeCpuWindow stolen = *quiet;
  stolen.steal_fraction = 0.12;
  EXPECT_TRUE(NodeCpuBusy(stolen));
  // Half a CPU is the floor on small nodes: 0.4 of 1 CPU is not busy.
  NodeCpuWindow small = *quiet;
  small.cpus = 1;
  small.other_cpus = 0.4;
  EXPECT_FALSE(NodeCpuBusy(small));
  small.other_cpus = 0.5;
  EXPECT_TRUE(NodeCpuBusy(small));
}

TEST(NodeCpuWindow, SamplesThatCannotBeComparedSayWhy) {
  NodeCpuSample before = Sample(10000, 50000, 0, 0, {});
  NodeCpuSample rebooted = Sample(100, 500, 0, 0, {});
  std::string why;
  EXPECT_FALSE(CutNodeCpuWindow(before, rebooted, &why));
  EXPECT_EQ(why, "node07: /proc/stat went backwards (a reboot inside the window?)");
  NodeCpuSample other = before;
  other.host = "node08";
  EXPECT_FALSE(CutNodeCpuWindow(before, other, &why));
  EXPECT_EQ(why, "samples of two hosts (node07, node08)");
}

}  // namespace
}  // namespace fabtrack
