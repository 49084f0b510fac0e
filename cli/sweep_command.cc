// fabtrack sweep: a benchmark over node counts, one night's scaling curve.
//   fabtrack sweep --nodes 1,2,4 [--ranks-per-node R] [--hostfile F | --slurm |
//                  --mpirun "CMD ..." | --no-launcher] --cluster NAME [--db ...]
//                  [--bench nccl-tests --nccl-tests-dir DIR --collective LIST]
//                  [--ab NAME=VALUE|nccl-lib=DIR [--ab-rounds N] [--format json]]
//                  [--fabric-scan [--fabric-ca DEV] [--fabric-port N]]
//                  -- <benchmark flags>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "analyzer/ab_verdict.h"
#include "app/cpu_bracket.h"
#include "app/fabric_bracket.h"
#include "app/sweep_flow.h"
#include "app/sweep_programs.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/counters/hw_counter_selection.h"
#include "collector/harness/harness_args.h"
#include "collector/sweep/sweep_plan.h"
#include "core/ab_comparison_json.h"
#include "core/clock.h"
#include "core/run_fabric_window.h"
#include "core/text.h"

namespace fabtrack::cli {
namespace {
namespace fs = std::filesystem;

struct SweepOptions {
  std::string nodes = "1-2";
  int ranks_per_node = 1;
  std::optional<std::string> hostfile;
  bool slurm = false;
  std::optional<std::string> mpirun;
  std::optional<std::string> allreduce;
  std::string cluster;
  std::optional<std::string> output_dir;
  std::vector<std::string> tags;
  std::vector<std::string> harness_args;
  std::string sysfs = "/sys";
  std::string ports = "auto";
  std::string cpu = "nodes";       // --cpu: the CPU bracket
  HwCounterSelection hw_counters;  // what the bracket's samples read
  std::string bench = "fabtrack-allreduce";
  std::optional<std::string> nccl_tests_dir;
  std::string collectives = "all_reduce";
  std::string nccl_tests_json = "auto";
  bool no_launcher = false;
  std::optional<std::string> ab;  // --ab NAME=VALUE | nccl-lib=DIR
  int ab_rounds = 2;
  std::string format = "text";
  DatabaseOptions database;
  // --fabric-scan: the subnet scanned before and after each run.
  bool fabric_scan = false;
  fabric::ScanSettings fabric;
};

std::vector<std::string> SplitWords(const std::string& text) {
  std::vector<std::string> words;
  std::string word;
  for (char c : text) {
    if (c == ' ' || c == '\t') {
      if (!word.empty()) words.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  if (!word.empty()) words.push_back(word);
  return words;
}

std::string NewSweepId() {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
  return IsoFromSeconds(now, IsoStyle::kBasic) + "-" + suffix;
}

// `--format json` prints one document on stdout; what the launched programs
// print (their tables, MPI's notices) would mix into it. While the sweep
// runs, stdout is the terminal's stderr; the document goes to the saved
// stdout at the end.
class StdoutAside {
 public:
  explicit StdoutAside(bool active) {
    if (!active) return;
    std::cout.flush();
    saved_ = dup(STDOUT_FILENO);
    if (saved_ >= 0) dup2(STDERR_FILENO, STDOUT_FILENO);
  }
  ~StdoutAside() { Restore(); }
  StdoutAside(const StdoutAside&) = delete;
  StdoutAside& operator=(const StdoutAside&) = delete;
  void Restore() {
    if (saved_ < 0) return;
    std::cout.flush();
    dup2(saved_, STDOUT_FILENO);
    close(saved_);
    saved_ = -1;
  }

 private:
  int saved_ = -1;
};

// `--ab SETTING` checked before the sweep starts (nothing printed, nothing
// run): a malformed setting or an NCCL folder side B could not load is a
// usage error naming what is wrong. Returns the parsed setting.
sweep::AbSetting CheckAbSetting(const std::string& text) {
  std::string why;
  std::optional<sweep::AbSetting> setting = sweep::ParseAbSetting(text, &why);
  if (setting && setting->nccl_lib) why = app::NcclLibraryProblem(setting->value);
  if (setting && why.empty()) return *setting;
  std::cerr << "fabtrack sweep: --ab " << text << ": " << why << "\n";
  throw CommandExit{kExitUsage};
}

app::PortBracketing PortBracketingFlag(const std::string& ports) {
  if (ports == "nodes") return app::PortBracketing::kNodes;
  if (ports == "local") return app::PortBracketing::kLocal;
  if (ports == "off") return app::PortBracketing::kOff;
  return app::PortBracketing::kAuto;
}

// The cables of a run's switch-side window whose error or congestion
// counters moved during it, both ends named, uplinks first.
void PrintFabricDeltas(const RunFabricWindow& window) {
  std::vector<FabricLinkDelta> deltas = RunFabricLinkDeltas(window);
  std::stable_sort(
      deltas.begin(), deltas.end(),
      [](const FabricLinkDelta& x, const FabricLinkDelta& y) { return x.uplink > y.uplink; });
  for (const FabricLinkDelta& d : deltas) {
    std::vector<std::string> moved;
    for (const auto& [end, counters] : {std::pair{&d.link.a, &d.a}, std::pair{&d.link.b, &d.b}}) {
      for (const auto& [counter, delta] : *counters) {
        if (IsFabricTroubleCounter(counter)) {
          moved.push_back(counter + " +" + std::to_string(delta) + " at " + EndName(*end));
        }
      }
    }
    if (moved.empty()) continue;
    std::cout << "  " << (d.uplink ? "uplink " : "cable ") << LinkName(d.link) << ": "
              << Join(moved, ", ") << std::endl;
  }
  if (!window.unmapped_hosts.empty()) {
    std::cout << "  not found among the subnet's HCAs: " << Join(window.unmapped_hosts, ", ")
              << std::endl;
  }
}

// The sweep's progress as it runs, on stdout (under --format json, stdout is
// set aside to stderr while the sweep runs: StdoutAside).
class ProgressPrinter : public app::SweepProgress {
 public:
  void Launching(const sweep::PlannedRun& run) override {
    std::cout << "\n== " << run.nodes << " node(s), " << run.ranks << " rank(s)";
    if (run.collective) std::cout << ", " << *run.collective;
    std::cout << std::endl;
  }
  void Stored(const app::StoredRun& run) override {
    std::cout << (run.inserted ? "stored run " : "already stored as run ") << run.run_id << " ("
              << run.sizes << " sizes, " << RunStatusName(run.status);
    if (run.bracketed_hosts)
      std::cout << ", port counters of " << *run.bracketed_hosts << " node(s)";
    if (run.fabric_window) {
      const RunFabricWindow& w = *run.fabric_window;
      std::cout << ", " << w.after.links.size() << " switch cable(s) of leaves "
                << (w.leaves.empty() ? "(none)" : Join(w.leaves, ","));
    }
    std::cout << ")" << std::endl;
    if (run.fabric_window) PrintFabricDeltas(*run.fabric_window);
  }
  void AbStarting(const AbRecord& record) override {
    std::cout << "A/B " << record.ab_id << ": side B with " << record.setting << ", order "
              << record.order << std::endl;
  }
  void AbSideStarting(char side, int round, const std::string& sweep_id) override {
    std::cout << "\n-- side " << side << ", round " << round << " (sweep " << sweep_id << ")"
              << std::endl;
  }
  void AbStored(std::optional<int64_t> comparison_id, int linked_runs) override {
    if (comparison_id) {
      std::cout << "\nstored A/B comparison " << *comparison_id << " (" << linked_runs
                << " runs linked)" << std::endl;
    } else {
      std::cout << "\nA/B comparison spooled (database unavailable)" << std::endl;
    }
  }
};

// The verdict with where it is stored: the comparison's id (`runs ab`) and
// each run's (`runs show`, `diff`); null for what was spooled.
void PrintAbJson(const app::AbSweepResult& result) {
  nlohmann::json doc = AbRecordToJson(result.record);
  doc["comparison_id"] =
      result.comparison_id ? nlohmann::json(*result.comparison_id) : nlohmann::json();
  doc["runs"] = nlohmann::json::array();
  for (const app::AbSweepResult::Run& run : result.runs) {
    doc["runs"].push_back({{"run_id", run.run_id ? nlohmann::json(*run.run_id) : nlohmann::json()},
                           {"side", std::string(1, run.side)},
                           {"round", run.round}});
  }
  std::cout << doc.dump(2) << std::endl;
}

void RunSweep(const SweepOptions& o) {
  sweep::SweepSpec spec;
  auto counts = sweep::ParseNodeCounts(o.nodes);
  if (!counts) {
    std::cerr << "fabtrack sweep: --nodes " << o.nodes
              << ": expected a list (1,2,4), a range (1-4) or pow2:N\n";
    throw CommandExit{kExitUsage};
  }
  if (o.format == "json" && !o.ab) {
    std::cerr << "fabtrack sweep: --format json prints an A/B verdict; it needs --ab\n";
    throw CommandExit{kExitUsage};
  }
  // Every flag is checked before the sweep says anything or launches a rank.
  std::optional<sweep::AbSetting> ab_setting;
  if (o.ab) ab_setting = CheckAbSetting(*o.ab);
  spec.node_counts = *counts;
  spec.ranks_per_node = o.ranks_per_node;
  spec.as_root = geteuid() == 0;
  if (o.no_launcher) {
    spec.launcher = sweep::Launcher::kDirect;
  } else if (o.slurm) {
    spec.launcher = sweep::Launcher::kSlurm;
  } else if (o.mpirun) {
    spec.launcher = sweep::Launcher::kCustom;
    spec.custom_prefix = SplitWords(*o.mpirun);
  } else if (o.hostfile) {
    spec.launcher = sweep::Launcher::kHostfile;
    std::ifstream in(*o.hostfile);
    if (!in) {
      std::cerr << "fabtrack sweep: cannot read --hostfile " << *o.hostfile << "\n";
      throw CommandExit{kExitUsage};
    }
    spec.hosts = sweep::ParseHostfile(std::string((std::istreambuf_iterator<char>(in)), {}));
  }
  if (o.bench == "nccl-tests") {
    spec.benchmark = sweep::Benchmark::kNcclTests;
    if (!o.nccl_tests_dir) {
      std::cerr << "fabtrack sweep: --bench nccl-tests needs --nccl-tests-dir DIR (where "
                   "all_reduce_perf is)\n";
      throw CommandExit{kExitUsage};
    }
    app::NcclTestsPrograms found = app::FindNcclTestsPrograms(*o.nccl_tests_dir, o.collectives);
    if (!found.problem.empty()) {
      std::cerr << "fabtrack sweep: " << found.problem << "\n";
      throw CommandExit{kExitUsage};
    }
    spec.nccl_tests = std::move(found.programs);
    spec.nccl_tests_json =
        app::NcclTestsWriteJson(o.nccl_tests_json, spec.nccl_tests.front().path, std::cerr);
  } else {
    if (o.collectives != "all_reduce") {
      std::cerr << "fabtrack sweep: fabtrack-allreduce runs all_reduce only; --collective "
                << o.collectives << " needs --bench nccl-tests\n";
      throw CommandExit{kExitUsage};
    }
    spec.allreduce = o.allreduce ? *o.allreduce : app::FindAllreduce().value_or("");
    // fabtrack-allreduce's own parser on the flags after "--": a typo is
    // refused here, not by every rank after mpirun started them. (Whether
    // its NCCL backend was built, the harness says itself.)
    if (std::string problem = harness::CheckHarnessArgs(o.harness_args, /*nccl_compiled=*/true);
        !problem.empty()) {
      std::cerr << "fabtrack sweep: fabtrack-allreduce flags after --: " << problem << "\n";
      throw CommandExit{kExitUsage};
    }
  }
  spec.harness_args = o.harness_args;
  spec.tags = o.tags;
  spec.sweep_id = NewSweepId();
  spec.output_dir = o.output_dir.value_or(
      (fs::temp_directory_path() / ("fabtrack-sweep-" + spec.sweep_id)).string());
  spec.hostfile_dir = spec.output_dir;
  if (std::string problem = sweep::ValidateSpec(spec); !problem.empty()) {
    std::cerr << "fabtrack sweep: " << problem << "\n";
    throw CommandExit{kExitUsage};
  }
  app::SweepRequest request;
  request.spec = spec;
  request.own_output_dir = !o.output_dir;
  request.cluster = o.cluster;
  request.ports = PortBracketingFlag(o.ports);
  request.sysfs = o.sysfs;
  request.hw_counters = o.hw_counters;
  if (o.fabric_scan) {
    if (!fabric::SubnetScanBuilt()) {
      std::cerr << "fabtrack sweep: --fabric-scan: fabtrack was built without "
                   "libibmad/libibnetdisc\n";
      throw CommandExit{kExitUsage};
    }
    request.brackets.push_back(app::MakeFabricScanBracket(o.fabric, std::cerr));
  }
  // Innermost: the CPUs' window is the benchmark's own, as near as it gets.
  if (o.cpu != "off") request.brackets.push_back(app::MakeCpuBracket(std::cerr));
  ProgressPrinter printer;
  app::SweepFlow flow(std::move(request), o.database, printer, std::cerr);

  std::ostream& progress = o.format == "json" ? std::cerr : std::cout;
  progress << "sweep " << spec.sweep_id << ": ";
  if (spec.benchmark == sweep::Benchmark::kNcclTests) {
    progress << "nccl-tests";
    for (const auto& program : spec.nccl_tests) progress << " " << program.collective;
    progress << (spec.nccl_tests_json ? " (-J reports)" : " (printed tables)") << ", ";
  }
  progress << "node counts";
  for (int k : spec.node_counts) progress << " " << k;
  progress << ", " << spec.ranks_per_node << " rank(s) per node, results in " << spec.output_dir
           << std::endl;
  if (o.ab) {
    const bool json = o.format == "json";
    StdoutAside aside(json);
    const app::AbSweepResult result = flow.RunAb(*ab_setting, *o.ab, o.ab_rounds);
    if (json) {
      aside.Restore();
      PrintAbJson(result);
    } else {
      std::cout << "\n" << analyzer::AbVerdictText(result.record);
    }
  } else {
    flow.RunPlan();
  }
  const app::SweepTally tally = flow.tally();
  progress << "\nsweep " << spec.sweep_id << ": " << tally.stored << " of " << tally.planned
           << " runs stored";
  if (tally.runs_spooled > 0 || tally.ab_spooled) {
    if (tally.runs_spooled > 0) progress << ", " << tally.runs_spooled << " spooled";
    if (tally.ab_spooled) {
      progress << (tally.runs_spooled > 0 ? ", and " : "; ") << "the A/B comparison spooled";
    }
    progress << " (database unavailable)";
  }
  progress << std::endl;
  flow.Finish();
}

}  // namespace

void SetupSweep(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run fabtrack-allreduce or nccl-tests over node counts and store the scaling curve");
  sweep->add_option("--nodes", o->nodes, "node counts: 1,2,4 or 1-4 or pow2:16 (default 1-2)");
  sweep->add_option("--ranks-per-node", o->ranks_per_node, "MPI ranks (GPUs) per node")
      ->check(PositiveCount());
  sweep->add_option("--hostfile", o->hostfile, "mpirun with the first k hosts of this hostfile");
  sweep->add_flag("--slurm", o->slurm, "srun -N k inside the current Slurm allocation");
  sweep->add_option("--mpirun", o->mpirun,
                    "launcher prefix before -np, e.g. \"scripts/netns-fabric.sh mpirun --\"");
  sweep->add_option("--allreduce", o->allreduce, "path of fabtrack-allreduce");
  sweep->add_option("--cluster", o->cluster, "cluster name")->check(NameValue())->required();
  sweep->add_option("--output-dir", o->output_dir,
                    "where result files go (shared with the first node; default a temp dir)");
  sweep->add_option("--tag", o->tags, "free tag key=value (repeatable)");
  sweep->add_option("--sysfs", o->sysfs,
                    "sysfs root whose RDMA port counters bracket each run on every node "
                    "(default /sys)");
  sweep
      ->add_option("--ports", o->ports,
                   "port-counter bracketing: auto (every node of each run when this host has "
                   "class/infiniband), nodes, local (this host only) or off")
      ->check(CLI::IsMember({"auto", "nodes", "local", "off"}));
  AddHwCountersOption(sweep, &o->hw_counters);
  sweep
      ->add_option("--cpu", o->cpu,
                   "CPU bracketing: nodes (every node of each run samples its CPUs before and "
                   "after it with `fabtrack counters cpu`; this host for a local sweep) or off")
      ->check(CLI::IsMember({"nodes", "off"}));
  sweep
      ->add_option("--bench", o->bench,
                   "benchmark: fabtrack-allreduce (default) or nccl-tests (its programs in "
                   "--nccl-tests-dir; flags after -- go to them)")
      ->check(CLI::IsMember({"fabtrack-allreduce", "nccl-tests"}));
  sweep->add_option("--nccl-tests-dir", o->nccl_tests_dir,
                    "where nccl-tests' programs are (all_reduce_perf, all_gather_perf, ...)");
  sweep->add_option("--collective", o->collectives,
                    "nccl-tests collectives, comma-separated (all_reduce,all_gather,...) or all; "
                    "one run of each per node count (default all_reduce)");
  sweep
      ->add_option("--nccl-tests-json", o->nccl_tests_json,
                   "store nccl-tests' -J report: auto (when the program lists -J), on, off")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  sweep->add_flag("--no-launcher", o->no_launcher,
                  "run the benchmark itself on this node, without mpirun (one node; "
                  "nccl-tests -g N for N GPUs)");
  sweep->add_option("--ab", o->ab,
                    "A/B: run the sweep without (A) and with (B) one setting, alternating "
                    "A B B A, and judge the difference against the noise: NAME=VALUE (an "
                    "environment variable of the ranks: NCCL_*, OMPI_MCA_*, UCX_*, ...) or "
                    "nccl-lib=DIR (side B loads NCCL from DIR)");
  sweep
      ->add_option("--ab-rounds", o->ab_rounds,
                   "A/B rounds, each running both sides (default 2: A B B A)")
      ->check(WholeNumber(1, 50));
  sweep->add_flag("--fabric-scan", o->fabric_scan,
                  "scan the InfiniBand subnet before and after each run (as `fabric scan`) and "
                  "store the run's switch cables (its nodes' leaves and their uplinks) with it");
  sweep->add_option("--fabric-ca", o->fabric.ca,
                    "--fabric-scan's local CA (default: the first with an active port)");
  sweep->add_option("--fabric-port", o->fabric.port,
                    "--fabric-scan's CA port (default: the "
                    "first active)");
  AddFormatOption(sweep, &o->format, {"text", "json"});
  AddDatabaseOptions(sweep, &o->database);
  sweep->callback([o] {
    o->harness_args = PassthroughArgs();
    RunSweep(*o);
  });
}

}  // namespace fabtrack::cli
