// /proc's CPU texts (collector/parse/proc_cpu_parser) on any input: the three
// parsers either refuse with a reason naming the file and line, or return
// values a window can be cut from (no negative tick, CPUs counted, loads not
// negative); a sample's JSON reads back as itself.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "collector/parse/proc_cpu_parser.h"
#include "core/node_cpu.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::string why;
  std::optional<fabtrack::ProcStat> stat = fabtrack::ParseProcStat(text, &why);
  if (stat) {
    const fabtrack::CpuTimes& t = stat->times;
    for (int64_t v : {t.user, t.nice, t.system, t.idle, t.iowait, t.irq, t.softirq, t.steal}) {
      if (v < 0) __builtin_trap();
    }
    if (stat->cpus < 0) __builtin_trap();
  } else if (why.rfind("/proc/stat:", 0) != 0) {
    __builtin_trap();
  }
  why.clear();
  std::optional<fabtrack::LoadAverage> load = fabtrack::ParseLoadavg(text, &why);
  if (load && (load->load1 < 0 || load->load5 < 0 || load->load15 < 0)) __builtin_trap();
  if (!load && why.rfind("/proc/loadavg:1:", 0) != 0) __builtin_trap();
  why.clear();
  std::optional<fabtrack::ProcPidStat> pid = fabtrack::ParseProcPidStat(text, &why);
  if (!pid && why.rfind("stat:1:", 0) != 0) __builtin_trap();
  if (stat && load) {
    fabtrack::NodeCpuSample sample;
    sample.host = "fuzz";
    sample.cpus = stat->cpus;
    sample.times = stat->times;
    sample.load = *load;
    if (pid) sample.processes.push_back({pid->pid, pid->start_ticks, pid->comm, pid->utime});
    std::optional<fabtrack::NodeCpuSample> back =
        fabtrack::NodeCpuSampleFromJson(fabtrack::NodeCpuSampleToJson(sample), &why);
    if (!back || !(*back == sample)) __builtin_trap();
  }
  return 0;
}
