// What /proc says about a node's CPUs (proc(5)): /proc/stat's aggregate
// "cpu" line and its cpuN lines, /proc/loadavg, and one process's
// /proc/PID/stat. Pure: text in, structs out; the reader is
// collector/counters/node_cpu.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/node_cpu.h"

namespace fabtrack {

struct ProcStat {
  CpuTimes times;  // the "cpu" line
  int cpus = 0;    // "cpuN" lines
};
// nullopt with *why ("/proc/stat:LINE: ...") when there is no aggregate
// "cpu" line or it holds fewer than the four fields every kernel prints
// (user nice system idle); fields a kernel does not print (iowait since
// 2.5.41, irq/softirq since 2.6.0, steal since 2.6.11) read as 0.
std::optional<ProcStat> ParseProcStat(std::string_view text, std::string* why);

// "0.52 0.58 0.59 2/512 12345"
std::optional<LoadAverage> ParseLoadavg(std::string_view text, std::string* why);

struct ProcPidStat {
  int pid = 0;
  // Between the first '(' and the last ')' (it may hold both); bytes that are
  // not printable ASCII read as '?'.
  std::string comm;
  char state = '?';
  int ppid = 0;
  uint64_t flags = 0;            // PF_*: PF_KTHREAD 0x00200000 marks a kernel thread
  int64_t utime = 0, stime = 0;  // ticks
  int64_t start_ticks = 0;       // ticks after boot
  bool KernelThread() const { return (flags & 0x00200000u) != 0; }
};
// One /proc/PID/stat line; nullopt with *why when fields 1-22 are not there.
std::optional<ProcPidStat> ParseProcPidStat(std::string_view text, std::string* why);

}  // namespace fabtrack
