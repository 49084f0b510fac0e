#include "collector/harness/machine_placement.h"

#include <sched.h>

#include <algorithm>
#include <charconv>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include "core/text.h"

namespace fabtrack::harness {

MachinePlacement PlaceOnMachines(const std::vector<std::string>& boot_ids,
                                 const std::vector<std::vector<int>>& cpus) {
  struct Machine {
    int ranks = 0;
    std::set<int> cpus;
  };
  std::map<std::string, Machine> by_id;
  for (size_t r = 0; r < boot_ids.size(); ++r) {
    // An unknown id is a machine of its own: never merge what we cannot tell apart.
    std::string key = boot_ids[r].empty() ? "\x01rank" + std::to_string(r) : boot_ids[r];
    Machine& m = by_id[key];
    ++m.ranks;
    if (r < cpus.size()) m.cpus.insert(cpus[r].begin(), cpus[r].end());
  }
  MachinePlacement p;
  p.machines = static_cast<int>(by_id.size());
  for (const auto& [id, m] : by_id) {
    const int machine_cpus = std::max(1, static_cast<int>(m.cpus.size()));
    // The most crowded machine, by ranks per CPU.
    if (p.max_ranks_per_machine == 0 ||
        static_cast<long>(m.ranks) * p.cpus_per_machine >
            static_cast<long>(p.max_ranks_per_machine) * machine_cpus) {
      p.max_ranks_per_machine = m.ranks;
      p.cpus_per_machine = machine_cpus;
    }
  }
  return p;
}

std::string ReadBootId(const std::string& proc_root) {
  std::ifstream in(proc_root + "/sys/kernel/random/boot_id");
  std::string id;
  if (!(in >> id)) return "";
  return id;
}

std::vector<int> UsableCpus() {
  std::vector<int> ids;
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
      if (CPU_ISSET(cpu, &set)) ids.push_back(cpu);
    }
  }
  if (ids.empty()) {
    for (unsigned cpu = 0; cpu < std::max(1u, std::thread::hardware_concurrency()); ++cpu) {
      ids.push_back(static_cast<int>(cpu));
    }
  }
  return ids;
}

std::string CpuListText(const std::vector<int>& cpus) {
  std::string text;
  for (int cpu : cpus) {
    if (!text.empty()) text += ',';
    text += std::to_string(cpu);
  }
  return text;
}

std::vector<int> ParseCpuList(const std::string& text) {
  std::vector<int> cpus;
  for (const std::string_view item : Split(text, ',')) {
    int value = 0;
    auto [ptr, ec] = std::from_chars(item.data(), item.data() + item.size(), value);
    if (ec == std::errc() && ptr == item.data() + item.size() && value >= 0) cpus.push_back(value);
  }
  return cpus;
}

}  // namespace fabtrack::harness
