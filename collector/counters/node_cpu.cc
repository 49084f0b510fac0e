#include "collector/counters/node_cpu.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "collector/parse/proc_cpu_parser.h"

namespace fabtrack {
namespace {
namespace fs = std::filesystem;

std::optional<std::string> Slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string NetNamespace(const std::string& proc_root, const std::string& pid) {
  std::error_code ec;
  fs::path link = fs::read_symlink(fs::path(proc_root) / pid / "ns" / "net", ec);
  return ec ? std::string() : link.string();
}

}  // namespace

NodeCpuReading ReadNodeCpu(const std::string& proc_root, int self_pid) {
  NodeCpuReading reading;
  NodeCpuSample& s = reading.sample;
  const fs::path root(proc_root);
  std::optional<std::string> stat_text = Slurp(root / "stat");
  std::optional<std::string> load_text = Slurp(root / "loadavg");
  if (!stat_text || !load_text) {
    reading.error = "cannot read " + (root / (stat_text ? "loadavg" : "stat")).string();
    return reading;
  }
  std::string why;
  std::optional<ProcStat> stat = ParseProcStat(*stat_text, &why);
  if (!stat) {
    reading.error = (root / "stat").string() + why.substr(why.find(':'));
    return reading;
  }
  std::optional<LoadAverage> load = ParseLoadavg(*load_text, &why);
  if (!load) {
    reading.error = (root / "loadavg").string() + why.substr(why.find(':'));
    return reading;
  }
  s.times = stat->times;
  s.cpus = stat->cpus;
  s.load = *load;
  const long hz = sysconf(_SC_CLK_TCK);
  s.ticks_per_second = hz > 0 ? hz : 100;

  // Every process's stat, then the sampler's ancestry, then what is left.
  std::map<int, ProcPidStat> processes;
  std::error_code ec;
  for (fs::directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::optional<std::string> text = Slurp(it->path() / "stat");
    if (!text) continue;
    std::optional<ProcPidStat> p = ParseProcPidStat(*text, &why);
    if (p) processes[p->pid] = std::move(*p);
  }
  std::set<int> ancestry;
  for (int pid = self_pid; pid > 1 && ancestry.insert(pid).second;) {
    auto it = processes.find(pid);
    if (it == processes.end()) break;
    pid = it->second.ppid;
  }
  // The machine's main network namespace is the one most processes are in
  // (init's link cannot always be read, even by root in a container).
  std::map<int, std::string> net_of;
  std::map<std::string, int> members;
  for (const auto& [pid, p] : processes) {
    std::string net = NetNamespace(proc_root, std::to_string(pid));
    if (net.empty()) continue;
    ++members[net];
    net_of[pid] = std::move(net);
  }
  const std::string own_net = NetNamespace(proc_root, std::to_string(self_pid));
  int largest = 0;
  for (const auto& [net, count] : members) largest = std::max(largest, count);
  const bool own_namespace = !own_net.empty() && members[own_net] < largest;
  for (const auto& [pid, p] : processes) {
    if (p.KernelThread() || ancestry.count(pid) || p.utime + p.stime == 0) continue;
    if (own_namespace && net_of[pid] != own_net) continue;
    s.processes.push_back({pid, p.start_ticks, p.comm, p.utime + p.stime});
  }
  return reading;
}

}  // namespace fabtrack
