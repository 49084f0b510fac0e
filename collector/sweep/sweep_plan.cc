#include "collector/sweep/sweep_plan.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <set>
#include <sstream>
#include <tuple>

namespace fabtrack::sweep {
namespace {

std::optional<int> ToPositive(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size() || v <= 0 || v > 100000) return std::nullopt;
  return v;
}

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// The launcher's own way of handing `env` to every rank, inserted before
// the program.
void AddRankEnvironment(const SweepSpec& s, std::vector<std::string>* argv) {
  if (s.rank_env.empty()) return;
  std::vector<std::string> words;
  switch (s.launcher) {
    case Launcher::kDirect:
      words.push_back("env");
      for (const auto& [name, value] : s.rank_env) words.push_back(name + "=" + value);
      argv->insert(argv->begin(), words.begin(), words.end());
      return;
    case Launcher::kSlurm: {
      std::string exports = "--export=ALL";
      for (const auto& [name, value] : s.rank_env) exports += "," + name + "=" + value;
      argv->push_back(exports);
      return;
    }
    case Launcher::kLocal:
    case Launcher::kHostfile:
    case Launcher::kCustom:
      for (const auto& [name, value] : s.rank_env) {
        argv->insert(argv->end(), {"-x", name + "=" + value});
      }
      return;
  }
}

bool IsVariableName(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

}  // namespace

std::optional<AbSetting> ParseAbSetting(const std::string& text, std::string* why) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos) {
    *why = "expected NAME=VALUE (an environment variable of the ranks) or nccl-lib=DIR";
    return std::nullopt;
  }
  AbSetting setting{text.substr(0, eq), text.substr(eq + 1)};
  if (setting.name == "nccl-lib") {
    setting.nccl_lib = true;
    if (setting.value.empty() || setting.value.find(':') != std::string::npos) {
      *why = "nccl-lib=DIR takes one directory (where libnccl.so.2 is)";
      return std::nullopt;
    }
    return setting;
  }
  if (!IsVariableName(setting.name)) {
    *why = "\"" + setting.name + "\" is not an environment variable name (letters, digits, _)";
    return std::nullopt;
  }
  if (setting.name == "LD_LIBRARY_PATH") {
    *why = "use nccl-lib=DIR to run side B with another NCCL (it keeps the rest of the path)";
    return std::nullopt;
  }
  return setting;
}

std::vector<std::pair<std::string, std::string>> AbRankEnvironment(
    const AbSetting& setting, const std::string& current_ld_library_path) {
  if (!setting.nccl_lib) return {{setting.name, setting.value}};
  return {{"LD_LIBRARY_PATH", current_ld_library_path.empty()
                                  ? setting.value
                                  : setting.value + ":" + current_ld_library_path}};
}

std::string AbOrder(int rounds) {
  std::string order;
  for (int r = 1; r <= rounds; ++r) order += r % 2 == 1 ? "AB" : "BA";
  return order;
}

std::optional<std::vector<int>> ParseNodeCounts(const std::string& text) {
  std::set<int> counts;
  if (text.rfind("pow2:", 0) == 0) {
    auto max = ToPositive(std::string_view(text).substr(5));
    if (!max) return std::nullopt;
    for (int k = 1; k <= *max; k *= 2) counts.insert(k);
    if (*counts.rbegin() != *max) counts.insert(*max);  // always end at the maximum
    return std::vector<int>(counts.begin(), counts.end());
  }
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, ',')) {
    item = Trim(item);
    auto dash = item.find('-');
    if (dash != std::string::npos) {
      auto lo = ToPositive(std::string_view(item).substr(0, dash));
      auto hi = ToPositive(std::string_view(item).substr(dash + 1));
      if (!lo || !hi || *lo > *hi || *hi - *lo > 4096) return std::nullopt;
      for (int k = *lo; k <= *hi; ++k) counts.insert(k);
    } else {
      auto k = ToPositive(item);
      if (!k) return std::nullopt;
      counts.insert(*k);
    }
  }
  if (counts.empty()) return std::nullopt;
  return std::vector<int>(counts.begin(), counts.end());
}

std::vector<std::string> ParseHostfile(const std::string& text) {
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  std::stringstream ss(text);
  std::string line;
  while (std::getline(ss, line)) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = Trim(line);
    if (line.empty()) continue;
    std::string host = line.substr(0, line.find_first_of(" \t:"));
    if (seen.insert(host).second) hosts.push_back(host);
  }
  return hosts;
}

std::optional<int> NcclTestsRanksPerProcess(const std::vector<std::string>& args) {
  int gpus = 1, threads = 1;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    int* target = nullptr;
    std::string value;
    for (auto [short_flag, long_flag, slot] :
         {std::tuple{"-g", "--ngpus", &gpus}, std::tuple{"-t", "--nthreads", &threads}}) {
      const std::string long_eq = std::string(long_flag) + "=";
      if (a == short_flag || a == long_flag) {
        if (i + 1 >= args.size()) return std::nullopt;
        target = slot;
        value = args[++i];
      } else if (a.rfind(long_eq, 0) == 0) {
        target = slot;
        value = a.substr(long_eq.size());
      } else if (a.size() > 2 && a.rfind(short_flag, 0) == 0 && a[1] != '-') {
        target = slot;
        value = a.substr(2);
      }
      if (target) break;
    }
    if (!target) continue;
    std::optional<int> v = ToPositive(value);
    if (!v) return std::nullopt;
    *target = *v;
  }
  return gpus * threads;
}

std::string ValidateSpec(const SweepSpec& s) {
  if (s.node_counts.empty()) return "no node counts";
  if (s.ranks_per_node < 1) return "--ranks-per-node must be at least 1";
  if (s.benchmark == Benchmark::kFabtrackAllreduce && s.allreduce.empty()) {
    return "fabtrack-allreduce not found (use --allreduce PATH)";
  }
  if (s.benchmark == Benchmark::kNcclTests) {
    if (s.nccl_tests.empty()) return "no nccl-tests program to run";
    for (const std::string& a : s.harness_args) {
      if (a == "-J" || a.rfind("-J", 0) == 0 || a.rfind("--output_file", 0) == 0) {
        return "nccl-tests flag " + a + ": the sweep sets -J itself (its report is stored)";
      }
    }
    if (!NcclTestsRanksPerProcess(s.harness_args)) {
      return "nccl-tests flags: -g/-t need a positive whole number";
    }
  }
  if (s.launcher == Launcher::kDirect &&
      (s.node_counts != std::vector<int>{1} || s.ranks_per_node != 1)) {
    return "without a launcher the benchmark runs as one process on this node: --nodes 1, "
           "one rank per node (nccl-tests -g N drives N GPUs)";
  }
  if (s.launcher == Launcher::kHostfile) {
    if (s.hosts.empty()) return "the hostfile lists no hosts";
    if (s.node_counts.back() > static_cast<int>(s.hosts.size())) {
      return "--nodes asks for " + std::to_string(s.node_counts.back()) +
             " nodes but the hostfile lists " + std::to_string(s.hosts.size());
    }
  }
  if (s.launcher == Launcher::kCustom && s.custom_prefix.empty()) return "--mpirun is empty";
  if (s.launcher == Launcher::kSlurm) {
    for (const auto& [name, value] : s.rank_env) {
      if (value.find(',') != std::string::npos) {
        return "srun --export cannot pass a value with a comma (" + name + ")";
      }
    }
  }
  if (s.output_dir.empty()) return "no directory for result files";
  return "";
}

std::vector<PlannedRun> PlanSweep(const SweepSpec& s) {
  std::vector<PlannedRun> runs;
  for (int k : s.node_counts) {
    PlannedRun run;
    run.nodes = k;
    run.ranks = k * s.ranks_per_node;
    run.expected_ranks = run.ranks;
    const std::string np = std::to_string(run.ranks);
    std::vector<std::string>& a = run.argv;
    switch (s.launcher) {
      case Launcher::kDirect:
        break;
      case Launcher::kSlurm:
        a = {"srun", "-N", std::to_string(k), "--ntasks-per-node",
             std::to_string(s.ranks_per_node)};
        break;
      case Launcher::kLocal:
        // One host: ranks share it, over TCP like "Ethernet without RDMA".
        a = {s.mpirun, "-np",   np,    "--oversubscribe", "--bind-to",
             "none",   "--mca", "btl", "self,tcp"};
        if (s.as_root) a.push_back("--allow-run-as-root");
        break;
      case Launcher::kHostfile: {
        std::string path = s.hostfile_dir + "/hostfile." + s.sweep_id + "." + std::to_string(k);
        run.hostfile_path = path;
        for (int i = 0; i < k; ++i) {
          run.hostfile_lines.push_back(s.hosts[i] + " slots=" + std::to_string(s.ranks_per_node));
        }
        a = {s.mpirun,
             "-np",
             np,
             "--hostfile",
             path,
             "--map-by",
             "ppr:" + std::to_string(s.ranks_per_node) + ":node"};
        if (s.as_root) a.push_back("--allow-run-as-root");
        break;
      }
      case Launcher::kCustom:
        a = s.custom_prefix;
        a.insert(a.end(),
                 {"-np", np, "--map-by", "ppr:" + std::to_string(s.ranks_per_node) + ":node"});
        break;
    }
    AddRankEnvironment(s, &a);
    if (s.benchmark == Benchmark::kNcclTests) {
      // nccl-tests prints its table (and NCCL's log) on rank 0's stdout,
      // which the launcher brings here; -J writes the same table as JSON.
      const std::vector<std::string> launcher = a;
      const int per_process = NcclTestsRanksPerProcess(s.harness_args).value_or(1);
      for (const NcclTestsProgram& program : s.nccl_tests) {
        PlannedRun one = run;
        one.argv = launcher;
        one.argv.push_back(program.path);
        one.argv.insert(one.argv.end(), s.harness_args.begin(), s.harness_args.end());
        one.collective = program.collective;
        one.expected_ranks = run.ranks * per_process;
        const std::string stem = s.output_dir + "/" + s.sweep_id + ".nodes" + std::to_string(k) +
                                 "." + program.collective;
        one.transcript_file = stem + ".txt";
        if (s.nccl_tests_json) {
          one.json_file = stem + ".json";
          one.argv.insert(one.argv.end(), {"-J", *one.json_file});
        }
        runs.push_back(std::move(one));
      }
      continue;
    }
    a.push_back(s.allreduce);
    a.insert(a.end(), s.harness_args.begin(), s.harness_args.end());
    a.insert(a.end(), {"--sweep-id", s.sweep_id});
    for (const auto& tag : s.tags) a.insert(a.end(), {"--tag", tag});
    // Rank 0 may run on another host: it writes a result file (atomically,
    // after every size) and the sweep stores it from here, so no node needs
    // to reach the database and no password travels on a command line.
    run.output_file = s.output_dir + "/" + s.sweep_id + ".nodes" + std::to_string(k) + ".json";
    a.insert(a.end(), {"--output", *run.output_file});
    runs.push_back(std::move(run));
  }
  return runs;
}

namespace {

// The launcher's prefix that starts one process on every node of `run`
// (nothing for kLocal/kDirect: the command runs here).
std::vector<std::string> OnePerNode(const SweepSpec& s, const PlannedRun& run) {
  const std::string k = std::to_string(run.nodes);
  std::vector<std::string> a;
  switch (s.launcher) {
    case Launcher::kLocal:
    case Launcher::kDirect:
      break;
    case Launcher::kSlurm:
      a = {"srun", "-N", k, "--ntasks-per-node", "1"};
      break;
    case Launcher::kHostfile:
      // The run's hostfile gives each node its slots; one process per node.
      a = {s.mpirun,   "-np",       k, "--hostfile", run.hostfile_path.value_or(""),
           "--map-by", "ppr:1:node"};
      if (s.as_root) a.push_back("--allow-run-as-root");
      break;
    case Launcher::kCustom:
      a = s.custom_prefix;
      a.insert(a.end(), {"-np", k, "--map-by", "ppr:1:node"});
      break;
  }
  return a;
}

}  // namespace

std::vector<std::string> PlanPortSampling(const SweepSpec& s, const PlannedRun& run,
                                          const std::string& fabtrack, const std::string& sysfs,
                                          const std::string& out, const std::string& hw_counters) {
  std::vector<std::string> a = OnePerNode(s, run);
  a.insert(a.end(), {fabtrack, "counters", "snapshot", "--format", "json", "--sysfs", sysfs,
                     "--output", out});
  if (hw_counters != "all") a.insert(a.end(), {"--hw-counters", hw_counters});
  return a;
}

std::vector<std::string> PlanCpuSampling(const SweepSpec& s, const PlannedRun& run,
                                         const std::string& fabtrack, const std::string& out) {
  std::vector<std::string> a = OnePerNode(s, run);
  a.insert(a.end(), {fabtrack, "counters", "cpu", "--output", out});
  return a;
}

std::vector<std::string> PlanProbeRound(const SweepSpec& s, const std::vector<std::string>& hosts,
                                        const std::string& program,
                                        const std::vector<std::string>& args) {
  std::string list;
  for (const std::string& h : hosts) list += (list.empty() ? "" : ",") + h;
  const std::string n = std::to_string(hosts.size());
  std::vector<std::string> a;
  switch (s.launcher) {
    case Launcher::kLocal:
    case Launcher::kDirect:
      return {};
    case Launcher::kSlurm:
      a = {"srun", "-N", n, "-n", n, "--nodelist=" + list, "--ntasks-per-node", "1"};
      break;
    case Launcher::kHostfile:
      a = {s.mpirun, "-np", n, "--host", list, "--map-by", "ppr:1:node"};
      if (s.as_root) a.push_back("--allow-run-as-root");
      break;
    case Launcher::kCustom:
      a = s.custom_prefix;
      a.insert(a.end(), {"-np", n, "--host", list, "--map-by", "ppr:1:node"});
      break;
  }
  a.push_back(program);
  a.insert(a.end(), args.begin(), args.end());
  return a;
}

}  // namespace fabtrack::sweep
