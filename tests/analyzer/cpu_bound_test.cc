// cpu_bound: a CPU-driven run (MPI over TCP, NCCL over sockets) whose nodes
// were busy is reported as CPU-bound naming those nodes, and its scaling
// drop folds into that warning instead of standing as a critical fabric
// fault; quiet nodes, or a run over RDMA, say nothing.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "analyzer/analyze.h"
#include "analyzer/input_index.h"
#include "analyzer/problems.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer {
namespace {

using testing::InputBuilder;

constexpr int64_t kMiB = 1 << 20;

// One MPI (or NCCL) sweep over 2, 3, 4 nodes; at 4 nodes busbw fell to a
// hundredth and small-message latency rose 60x (a critical scaling_drop by
// the host-path thresholds).
std::map<int, RunView*> AddSweep(InputBuilder& b, const std::string& backend) {
  std::map<int, RunView*> runs;
  const std::map<int, std::pair<double, double>> curve = {
      {2, {1, 1}}, {3, {0.35, 3}}, {4, {0.01, 60}}};
  double offset = 0;
  for (const auto& [nodes, point] : curve) {
    RunView& run = b.AddRun(0, nodes, offset += 300);
    if (!backend.empty()) {
      run.source = "fabtrack-allreduce";
      run.backend = backend;
    }
    for (int64_t size : {8, 1024, 65536}) b.AddResult(run, size, 20 * point.second, 0.01);
    for (int64_t size : {64 * kMiB, 256 * kMiB}) b.AddResult(run, size, 1000, 100 * point.first);
  }
  // Pointers once every run is in (adding one moves the others).
  for (RunView& run : b.input().runs) runs[*run.nodes] = &run;
  return runs;
}

// Every node of `run` quiet (a sliver of sshd), but `busy_host` with
// `other_cpus` of its 2 CPUs taken by a CPU burner.
void AddWindows(InputBuilder& b, const RunView& run, const std::string& busy_host,
                double other_cpus) {
  std::vector<NodeCpuWindow>& windows = b.input().run_cpu_windows[run.id];
  for (const std::string& host : run.hosts) {
    NodeCpuWindow w{.host = host,
                    .seconds = 20,
                    .cpus = 2,
                    .busy_fraction = 0.6,
                    .other_cpus = 0.01,
                    .load1_before = 0.2,
                    .load1_after = 1.1,
                    .top_others = {{"sshd", 0.2}}};
    if (host == busy_host) {
      w.other_cpus = other_cpus;
      w.busy_fraction = 1;
      w.load1_after = 3.4;
      w.top_others = {{"bash", other_cpus * 20}};
    }
    windows.push_back(std::move(w));
  }
}

TEST(CpuBound, BusyNodeOfAnMpiRunIsNamedAndItsScalingDropFoldsIntoAWarning) {
  InputBuilder b;
  auto runs = AddSweep(b, "mpi");
  for (const auto& [nodes, run] : runs) AddWindows(b, *run, "node04", 1.4);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  const Finding* cpu = nullptr;
  const Finding* drop = nullptr;
  for (const Finding& f : result.findings) {
    if (f.kind == "cpu_bound") cpu = &f;
    if (f.kind == "scaling_drop" && f.subject.ends_with("/busbw")) drop = &f;
  }
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->severity, Severity::kWarning);
  EXPECT_EQ(cpu->run_id, runs[4]->id);  // only the 4-node run had node04
  EXPECT_EQ(cpu->host, "node04");
  EXPECT_EQ(
      cpu->message.rfind("CPU-bound: node node04 was busy during this 4-node run over MPI", 0), 0u)
      << cpu->message;
  EXPECT_NE(cpu->message.find("1.4 of 2 CPUs on other work (bash 28.0 CPU-s)"), std::string::npos)
      << cpu->message;
  EXPECT_EQ(cpu->evidence["busy_hosts"], nlohmann::json({"node04"}));
  ASSERT_TRUE(drop);
  // Critical by its own rule, capped at the cause's warning: not a fabric fault.
  EXPECT_EQ(drop->severity, Severity::kWarning);
  EXPECT_EQ(drop->evidence.value("severity_before_cause", ""), "CRITICAL");
  EXPECT_EQ(drop->evidence.value("explained_by", ""), "cpu_bound");
  EXPECT_EQ(ExitStatusOf(result), 1);

  std::vector<Problem> problems = FoldProblems(result, {}, "2026-11-01T12:00:00Z");
  ASSERT_EQ(problems.size(), 1u) << VerdictLine(problems);
  EXPECT_EQ(problems[0].kind, "cpu_bound");
  EXPECT_EQ(problems[0].severity, Severity::kWarning);
  ASSERT_GE(problems[0].related.size(), 1u);
  EXPECT_EQ(problems[0].related[0].kind, "scaling_drop");
  EXPECT_EQ(VerdictLine(problems).rfind("WARNING: cpu_bound", 0), 0u) << VerdictLine(problems);
}

TEST(CpuBound, QuietNodesLeaveTheFabricFaultCritical) {
  InputBuilder b;
  auto runs = AddSweep(b, "mpi");
  for (const auto& [nodes, run] : runs) AddWindows(b, *run, "", 0);
  AnalysisResult result = Analyze(b.Build(), AnalyzerConfig{});
  for (const Finding& f : result.findings) EXPECT_NE(f.kind, "cpu_bound") << f.message;
  EXPECT_EQ(ExitStatusOf(result), 2);
  std::vector<Problem> problems = FoldProblems(result, {}, "2026-11-01T12:00:00Z");
  ASSERT_FALSE(problems.empty());
  EXPECT_EQ(problems[0].kind, "scaling_drop");
  EXPECT_EQ(problems[0].severity, Severity::kCritical);
}

TEST(CpuBound, OnlyCpuDrivenTransportsAndBusyEnoughNodes) {
  // NCCL over IB: the CPU is not in the data path.
  InputBuilder ib;
  auto ib_runs = AddSweep(ib, "");
  AddWindows(ib, *ib_runs[3], "node02", 1.8);
  EXPECT_TRUE(testing::DetectOnly("cpu_bound", ib.Build(), AnalyzerConfig{}).empty());

  // NCCL over sockets: it is; a quarter of 2 CPUs is half a CPU.
  InputBuilder socket;
  auto socket_runs = AddSweep(socket, "");
  socket_runs[3]->network = "Socket";
  socket_runs[3]->transports = {"NET/Socket"};
  AddWindows(socket, *socket_runs[3], "node02", 0.45);
  EXPECT_TRUE(testing::DetectOnly("cpu_bound", socket.Build(), AnalyzerConfig{}).empty());
  socket.input().run_cpu_windows.clear();
  AddWindows(socket, *socket_runs[3], "node02", 0.6);
  std::vector<Finding> found = testing::DetectOnly("cpu_bound", socket.Build(), AnalyzerConfig{});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_NE(found[0].message.find("over NCCL's NET/Socket"), std::string::npos) << found[0].message;

  // A single-node run is no fabric measurement: nothing to redirect.
  InputBuilder one;
  RunView& alone = one.AddRun(0, 1);
  alone.source = "fabtrack-allreduce";
  alone.backend = "mpi";
  AddWindows(one, alone, "node01", 1.8);
  EXPECT_TRUE(testing::DetectOnly("cpu_bound", one.Build(), AnalyzerConfig{}).empty());

  // Steal alone (a VM's host took its CPUs).
  InputBuilder stolen;
  auto stolen_runs = AddSweep(stolen, "mpi");
  AddWindows(stolen, *stolen_runs[2], "", 0);
  stolen.input().run_cpu_windows[stolen_runs[2]->id][1].steal_fraction = 0.2;
  found = testing::DetectOnly("cpu_bound", stolen.Build(), AnalyzerConfig{});
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].host, "node02");
  EXPECT_NE(found[0].message.find("20% stolen"), std::string::npos) << found[0].message;
}

}  // namespace
}  // namespace fabtrack::analyzer
