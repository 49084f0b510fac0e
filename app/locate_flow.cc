#include "app/locate_flow.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <sstream>

#include "analyzer/locate/locate.h"
#include "app/batch_store.h"
#include "app/database_access.h"
#include "collector/harness/pair_probe.h"
#include "core/exit_code.h"
#include "core/subprocess.h"
#include "store/locate_store.h"

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
  if (verdict.suspects.empty()) return verdict.settled ? 0 : 1;
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

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  double last_round_s = 0;
  for (int round = 1; round <= max_rounds; ++round) {
    double remaining = r.budget_s - elapsed();
    if (r.budget_s > 0 && (remaining <= 1 || remaining < last_round_s)) {
      log << "round " << round << " not started: " << std::max(remaining, 0.0)
          << " s of the budget left, the last round took " << last_round_s << " s" << std::endl;
      report.budget_spent = true;
      break;
    }
    const double round_t0 = elapsed();
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
    if (r.budget_s > 0) {
      // Stopped when the budget is spent (SIGTERM, then SIGKILL 10 s later:
      // mpirun takes its ranks down on SIGTERM).
      std::vector<std::string> limited = {Resolve("timeout"), "--kill-after=10",
                                          std::to_string(std::max(1, static_cast<int>(remaining)))};
      argv.insert(argv.begin(), limited.begin(), limited.end());
    }
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
    if (r.budget_s > 0 && (run.exit_code == 124 || run.exit_code == 137)) {
      log << "round " << round << " stopped: the budget of " << r.budget_s << " s is spent"
          << std::endl;
      // Without one finished round there is nothing to judge: could not run.
      if (report.probes.empty()) throw CommandExit{kCouldNotRun};
      report.budget_spent = true;
      break;
    }
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
    last_round_s = elapsed() - round_t0;
    if (report.verdict.settled) break;
  }
  if (report.verdict.settled) report.budget_spent = false;
  report.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return report;
}

const std::vector<std::string>& DefaultLocateTriggers() {
  static const std::vector<std::string> kinds = {"scaling_drop", "busbw_regression",
                                                 "midsize_busbw_regression", "latency_regression",
                                                 "latency_jitter"};
  return kinds;
}

std::vector<int64_t> FlaggedRuns(const DatabaseChoice& choice, const std::string& cluster,
                                 const std::string& since, const std::vector<std::string>& kinds,
                                 std::ostream& err) {
  std::unique_ptr<pqxx::connection> db =
      OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  try {
    LimitReadTime(*db);
    pqxx::read_transaction txn(*db);
    return store::ReadFlaggedRuns(txn, cluster, since, kinds);
  } catch (const pqxx::failure& e) {
    err << "fabtrack locate: cannot read the flagged runs of " << cluster << ": " << e.what()
        << "\n";
    throw CommandExit{kCouldNotRun};
  }
}

LocateStored StoreLocateVerdict(const DatabaseChoice& choice, const LocateRecord& record,
                                std::ostream& err) {
  BatchStore sink(choice, err);
  store::SpoolBatch batch;
  batch.kind = store::SpoolBatch::Kind::kLocate;
  batch.locate = record;
  LocateStored out;
  try {
    StoreOutcome outcome = sink.Store({std::move(batch)});
    out.stored = outcome.stored;
    if (outcome.stored && !outcome.applied.empty()) {
      out.verdict_id = outcome.applied.front().locate_verdict_id;
    }
  } catch (const BatchRefused& e) {
    err << "fabtrack locate: the database refused the verdict: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  sink.Finish();
  return out;
}

}  // namespace fabtrack::app
