#include "app/locate_flow.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "analyzer/locate/locate.h"
#include "collector/harness/pair_probe.h"
#include "core/exit_code.h"
#include "core/subprocess.h"

namespace fabtrack::app {
namespace {
namespace fs = std::filesystem;

constexpr int kCouldNotRun = 3;
constexpr double kStrongScore = 6;

// argv[0] as an absolute path (RunProcess does not search PATH).
std::string Resolve(const std::string& program) {
  if (program.find('/') != std::string::npos) return fs::absolute(program).string();
  const char* path = std::getenv("PATH");
  std::stringstream dirs(path ? path : "/usr/bin:/bin");
  for (std::string dir; std::getline(dirs, dir, ':');) {
    fs::path candidate = fs::path(dir.empty() ? "." : dir) / program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return program;
}

}  // namespace

LocateTopology PlaceHosts(const std::vector<std::string>& hosts,
                          const std::optional<LocateTopology>& fabric,
                          std::vector<std::string>* unplaced) {
  LocateTopology t;
  t.nodes = hosts;
  if (!fabric) return t;
  for (const std::string& host : hosts) {
    std::string leaf;
    for (const auto& [node, l] : fabric->leaf_of) {
      if (harness::SameHost(node, host)) {
        leaf = l;
        break;
      }
    }
    if (leaf.empty()) {
      unplaced->push_back(host);
      continue;
    }
    t.leaf_of[host] = leaf;
    if (auto it = fabric->spine_of.find(leaf); it != fabric->spine_of.end()) {
      t.spine_of[leaf] = it->second;
    }
  }
  return t;
}

int LocateExitCode(const LocateVerdict& verdict) {
  if (verdict.suspects.empty()) return 0;
  return verdict.settled && verdict.suspects.front().score >= kStrongScore ? 2 : 1;
}

LocateReport RunLocateFlow(const LocateRequest& r, std::ostream& log) {
  LocateReport report;
  const auto t0 = std::chrono::steady_clock::now();
  report.topology = PlaceHosts(r.hosts, r.fabric, &report.unplaced);
  const LocateTopology& topology = report.topology;
  const int n = static_cast<int>(topology.nodes.size());
  const int max_rounds = r.max_rounds > 0
                             ? r.max_rounds
                             : 2 * static_cast<int>(std::ceil(std::log2(std::max(n, 2)))) + 2;
  std::map<std::string, int> index;
  for (int i = 0; i < n; ++i) index[topology.nodes[i]] = i;

  for (int round = 1; round <= max_rounds; ++round) {
    analyzer::LocateRound plan = analyzer::PlanLocateRound(topology, report.probes, report.verdict);
    if (plan.probes.empty()) break;
    std::vector<harness::ProbePair> pairs;
    std::vector<std::string> hosts;
    for (const std::vector<int>& members : plan.probes) {
      if (members.size() != 2) continue;  // the planner asks only for pairs today
      pairs.push_back({topology.nodes[members[0]], topology.nodes[members[1]]});
      hosts.push_back(pairs.back().a);
      hosts.push_back(pairs.back().b);
    }
    const std::string output = r.work_dir + "/round" + std::to_string(round) + ".json";
    std::vector<std::string> args = {"--pairs", harness::FormatProbePairs(pairs), "--output",
                                     output};
    args.insert(args.end(), r.probe_args.begin(), r.probe_args.end());
    std::vector<std::string> argv = sweep::PlanProbeRound(r.launch, hosts, r.probe_program, args);
    if (argv.empty()) {
      log << "fabtrack locate: this launcher cannot place one rank on each node\n";
      throw CommandExit{kCouldNotRun};
    }
    argv[0] = Resolve(argv[0]);
    log << "round " << round << ": " << pairs.size() << " pair(s), each measured both ways"
        << std::endl;
    ProcessResult run;
    try {
      run = RunProcess(argv);
    } catch (const std::exception& e) {
      log << "fabtrack locate: round " << round << ": " << e.what() << "\n";
      throw CommandExit{kCouldNotRun};
    }
    std::ifstream in(output);
    std::string text((std::istreambuf_iterator<char>(in)), {});
    std::string why = "no result file " + output;
    std::optional<harness::PairProbeResults> results;
    if (in) results = harness::PairProbeResultsFromJson(text, &why);
    if (run.exit_code != 0 || !results) {
      log << "fabtrack locate: round " << round << " failed (exit " << run.exit_code << "): " << why
          << "\n"
          << run.output;
      throw CommandExit{kCouldNotRun};
    }
    for (const harness::OneWayProbe& p : results->probes) {
      auto from = index.find(p.from), to = index.find(p.to);
      if (from == index.end() || to == index.end()) continue;
      LocateProbe probe;
      probe.members = {from->second, to->second};
      probe.round = round;
      probe.busbw_gbps = p.busbw_gbps;
      probe.small_latency_us = p.latency_us;
      probe.one_way = true;
      report.probes.push_back(probe);
    }
    report.verdict = analyzer::JudgeLocate(topology, report.probes);
    if (report.verdict.settled) break;
  }
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

}  // namespace fabtrack::app
