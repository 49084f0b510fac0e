// A node's CPUs around a sweep run (issue 32 item 3). Over sockets or MPI
// over TCP the CPU is in the data path: a node busy with other work, or a
// VM whose host steals its CPUs, reads as a slow fabric. The sweep samples
// every node of a run just before and just after it (`fabtrack counters
// cpu`, collector/counters/node_cpu), and the run keeps each node's window
// (schema 023): what the node's CPUs did, and how much of it was work other
// than the benchmark. Plain data with its one serializer.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/json_instances.h"

namespace fabtrack {

// /proc/stat's aggregate "cpu" line, in clock ticks (USER_HZ) since boot.
struct CpuTimes {
  int64_t user = 0, nice = 0, system = 0, idle = 0, iowait = 0, irq = 0, softirq = 0, steal = 0;
  // Everything the CPUs did or waited, guest time left out (the kernel
  // counts it inside user and nice already).
  int64_t Total() const { return user + nice + system + idle + iowait + irq + softirq + steal; }
  friend bool operator==(const CpuTimes&, const CpuTimes&) = default;
};

// /proc/loadavg.
struct LoadAverage {
  double load1 = 0, load5 = 0, load15 = 0;
  int runnable = 0, threads = 0;  // "2/512": scheduling entities running, existing
  friend bool operator==(const LoadAverage&, const LoadAverage&) = default;
};

// One user process's CPU time (utime + stime of /proc/PID/stat, ticks). A
// process is (pid, start time): a pid reused inside the window is another
// process.
struct ProcessCpu {
  int pid = 0;
  int64_t start_ticks = 0;  // field 22, ticks after boot
  std::string comm;
  int64_t cpu_ticks = 0;
  friend bool operator==(const ProcessCpu&, const ProcessCpu&) = default;
};

// One reading of a node's CPUs.
struct NodeCpuSample {
  std::string host;
  std::string taken_at;  // UTC ISO
  int cpus = 0;          // cpuN lines of /proc/stat (the CPUs online)
  int64_t ticks_per_second = 100;
  CpuTimes times;
  LoadAverage load;
  // The node's user processes that had used CPU time, but the sampler and
  // the processes it runs under (its launcher): what else runs there. A
  // sampler in a network namespace that is not the machine's main one (the
  // one most processes are in: a container, a node of
  // scripts/netns-fabric.sh) counts only the processes of that namespace:
  // they are the node; elsewhere, every process.
  std::vector<ProcessCpu> processes;
  friend bool operator==(const NodeCpuSample&, const NodeCpuSample&) = default;
};

// Another process's share of a node's window.
struct OtherProcess {
  std::string comm;
  double cpu_seconds = 0;
  friend bool operator==(const OtherProcess&, const OtherProcess&) = default;
};

// One node's CPUs over a run: between its sample before and its sample after.
struct NodeCpuWindow {
  std::string host;
  double seconds = 0;  // between the two samples
  int cpus = 0;
  // Shares of all CPU time in the window (the node's whole machine: a
  // namespace sees its machine's /proc/stat): not idle, stolen by a
  // hypervisor.
  double busy_fraction = 0, steal_fraction = 0;
  // CPU time of processes other than the benchmark over the window, in
  // CPUs (cpu-seconds / seconds): processes seen in both samples (their
  // growth) and those started inside the window (all of theirs). The
  // benchmark's ranks have exited when the sample after is taken, so they
  // are in neither.
  double other_cpus = 0;
  double load1_before = 0, load1_after = 0;
  std::vector<OtherProcess> top_others;  // the heaviest three, heaviest first
  friend bool operator==(const NodeCpuWindow&, const NodeCpuWindow&) = default;
};

// The window between two samples of one host; nullopt when they cannot be
// compared (different hosts or CPU counts, time going backwards: a reboot).
std::optional<NodeCpuWindow> CutNodeCpuWindow(const NodeCpuSample& before,
                                              const NodeCpuSample& after, std::string* why);

// A node busy enough to slow a CPU-driven transport: other work held at
// least a quarter of its CPUs (at least half a CPU) on average over the
// run, or its hypervisor stole at least a tenth of its CPU time. Ranks that
// poll a socket need their CPU the whole time; a quarter of the node taken
// by other work (one CPU of four) leaves some rank sharing its CPU.
struct CpuBusyThresholds {
  double other_share = 0.25;  // of the node's CPUs
  double other_min_cpus = 0.5;
  double steal_fraction = 0.10;
};
bool NodeCpuBusy(const NodeCpuWindow& window, const CpuBusyThresholds& thresholds = {});
// "2.0 of 2 CPUs on other work (bash 1.9 CPU-s/s...)": why a window is busy,
// or what it held when it is not.
std::string DescribeNodeCpu(const NodeCpuWindow& window);

// {"host", "taken_at", "cpus", "ticks_per_second", "times": {"user", ...},
//  "load": {"load1", ...}, "processes": [[pid, start_ticks, comm, cpu_ticks]]}
nlohmann::json NodeCpuSampleToJson(const NodeCpuSample& sample);
std::optional<NodeCpuSample> NodeCpuSampleFromJson(const nlohmann::json& doc, std::string* why);

// {"host", "seconds", "cpus", "busy_fraction", "steal_fraction", "other_cpus",
//  "load1_before", "load1_after", "top_others": [{"comm", "cpu_seconds"}]}
nlohmann::json NodeCpuWindowToJson(const NodeCpuWindow& window);
std::optional<NodeCpuWindow> NodeCpuWindowFromJson(const nlohmann::json& doc, std::string* why);

}  // namespace fabtrack
