// fabtrack sweep: fabtrack-allreduce over node counts, one night's scaling curve.
//   fabtrack sweep --nodes 1,2,4 [--ranks-per-node R] [--hostfile F | --slurm |
//                  --mpirun "CMD ..."] --cluster NAME [--db ...] -- <harness flags>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "app/batch_store.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/sweep/sweep_plan.h"
#include "core/clock.h"
#include "core/counter_deltas.h"
#include "core/port_sample_json.h"
#include "core/run_record_json.h"
#include "core/subprocess.h"

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
  DatabaseOptions database;
};

// Port counters of every node of one run, before and after it.
struct Bracket {
  std::vector<HostPorts> before, after;
  std::string started_at, ended_at;
  double seconds = 0;
};

std::string LocalHostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

// fabtrack-allreduce beside this binary (installed), or in the build tree.
std::optional<std::string> FindAllreduce() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (fs::path candidate : {self.parent_path() / "fabtrack-allreduce",
                             self.parent_path().parent_path() / "app" / "fabtrack-allreduce"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

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

std::string SelfPath() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? "fabtrack" : self.string();
}

// One sample of every node of `run`: the run's launcher starts one
// `fabtrack counters snapshot` per node (or reads this host for a local
// sweep), each writing its own file in the sweep's output directory (which,
// like the result files, must be shared with the nodes). A file that is not
// a sample is reported and skipped; nothing is fatal: the benchmark matters
// more than its bracket.
std::vector<HostPorts> SampleNodes(const sweep::SweepSpec& spec, const sweep::PlannedRun& run,
                                   const std::string& sysfs, const std::string& phase,
                                   bool local_only) {
  std::vector<HostPorts> hosts;
  if (local_only) {
    HostPorts host = ReadSysfsPorts(sysfs);
    host.host = LocalHostname();
    hosts.push_back(std::move(host));
    return hosts;
  }
  const std::string stem =
      spec.sweep_id + ".nodes" + std::to_string(run.nodes) + ".ports-" + phase + ".";
  int code = 0;
  try {
    code = RunAttached(sweep::PlanPortSampling(spec, run, SelfPath(), sysfs,
                                               spec.output_dir + "/" + stem + "{host}.json"));
  } catch (const std::exception& e) {
    std::cerr << "fabtrack sweep: port counters " << phase << ": " << e.what() << "\n";
    return hosts;
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(spec.output_dir)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(stem, 0) == 0 && name.size() > 5 && name.ends_with(".json")) {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::ifstream in(file);
    std::string why = "not JSON";
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    std::optional<HostPorts> host =
        doc.is_discarded() ? std::nullopt : HostPortsFromJson(doc, &why);
    if (!host) {
      std::cerr << file.string() << ":1: not a port sample (" << why << "), skipped\n";
      continue;
    }
    hosts.push_back(std::move(*host));
  }
  if (code != 0 || hosts.size() != static_cast<size_t>(run.nodes)) {
    std::cerr << "fabtrack sweep: port counters " << phase << ": " << hosts.size() << " of "
              << run.nodes << " node(s) sampled (launcher exit " << code << ")\n";
  }
  return hosts;
}

std::string NewSweepId() {
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
  return IsoFromSeconds(now, IsoStyle::kBasic) + "-" + suffix;
}

// Removes a folder when it goes out of scope (every exit path, exceptions
// included), unless told to keep it.
class TemporaryFolder {
 public:
  explicit TemporaryFolder(std::string path) : path_(std::move(path)) {}
  ~TemporaryFolder() {
    if (path_.empty()) return;
    if (keep_) {
      std::cerr << "fabtrack sweep: kept " << path_ << "\n";
      return;
    }
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  TemporaryFolder(const TemporaryFolder&) = delete;
  TemporaryFolder& operator=(const TemporaryFolder&) = delete;
  void Keep() { keep_ = true; }

 private:
  std::string path_;
  bool keep_ = false;
};

void RunSweep(const SweepOptions& o) {
  sweep::SweepSpec spec;
  auto counts = sweep::ParseNodeCounts(o.nodes);
  if (!counts) {
    std::cerr << "fabtrack sweep: --nodes " << o.nodes
              << ": expected a list (1,2,4), a range (1-4) or pow2:N\n";
    throw CommandExit{kExitUsage};
  }
  spec.node_counts = *counts;
  spec.ranks_per_node = o.ranks_per_node;
  spec.as_root = geteuid() == 0;
  if (o.slurm) {
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
  spec.allreduce = o.allreduce ? *o.allreduce : FindAllreduce().value_or("");
  spec.harness_args = o.harness_args;
  spec.tags = o.tags;
  spec.sweep_id = NewSweepId();
  spec.output_dir = o.output_dir.value_or(
      (fs::temp_directory_path() / ("fabtrack-sweep-" + spec.sweep_id)).string());
  // A folder of our own making goes when the sweep ends, whichever way it
  // ends, unless it holds a result file that was neither stored nor spooled.
  TemporaryFolder own_folder(o.output_dir ? "" : spec.output_dir);
  spec.hostfile_dir = spec.output_dir;
  if (std::string problem = sweep::ValidateSpec(spec); !problem.empty()) {
    std::cerr << "fabtrack sweep: " << problem << "\n";
    throw CommandExit{kExitUsage};
  }
  std::error_code ec;
  fs::create_directories(spec.output_dir, ec);
  if (ec) {
    std::cerr << "fabtrack sweep: cannot create " << spec.output_dir << ": " << ec.message()
              << "\n";
    throw CommandExit{kExitInputError};
  }
  // A database that is away (now or later in the night) does not stop the
  // sweep: its runs are spooled and stored when it is back.
  app::BatchStore database(o.database, std::cerr);
  if (spec.as_root && spec.launcher != sweep::Launcher::kSlurm) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }

  std::cout << "sweep " << spec.sweep_id << ": node counts";
  for (int k : spec.node_counts) std::cout << " " << k;
  std::cout << ", " << spec.ranks_per_node << " rank(s) per node, results in " << spec.output_dir
            << std::endl;
  // Port counters bracket every run on every node ("nodes"), on this host
  // only ("local"), or not at all. "auto": where this host has RDMA ports,
  // every node; a local sweep's nodes are this host.
  bool bracketing = o.ports != "off";
  if (o.ports == "auto") bracketing = fs::exists(o.sysfs + "/class/infiniband");
  const bool local_ports = o.ports == "local" || spec.launcher == sweep::Launcher::kLocal;
  int worst = 0;
  int stored = 0;
  for (const sweep::PlannedRun& run : sweep::PlanSweep(spec)) {
    if (run.hostfile_path) {
      std::ofstream hostfile(*run.hostfile_path);
      for (const auto& line : run.hostfile_lines) hostfile << line << "\n";
    }
    std::cout << "\n== " << run.nodes << " node(s), " << run.ranks << " rank(s)" << std::endl;
    int code = 0;
    Bracket bracket;
    auto t0 = std::chrono::steady_clock::now();
    if (bracketing) {
      bracket.started_at = UtcNowIso();
      bracket.before = SampleNodes(spec, run, o.sysfs, "before", local_ports);
    }
    const std::string launched_at = UtcNowIso();
    try {
      code = RunAttached(run.argv);
    } catch (const std::exception& e) {
      std::cerr << "fabtrack sweep: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
    worst = std::max(worst, code);
    const std::string returned_at = UtcNowIso();
    if (bracketing) {
      bracket.after = SampleNodes(spec, run, o.sysfs, "after", local_ports);
      bracket.ended_at = UtcNowIso();
      bracket.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    // Whatever the exit code, keep what was measured: a run cut short left a
    // "partial" result file.
    std::ifstream in(*run.output_file);
    if (!in) {
      std::cerr << "fabtrack sweep: " << run.nodes << " node(s): no result file (exit " << code
                << ")\n";
      // fabtrack-allreduce exits 2 on bad flags before measuring anything:
      // every other node count would fail the same way.
      if (code == kExitUsage) throw CommandExit{kExitUsage};
      continue;
    }
    std::string why;
    nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
    std::optional<RunRecord> record =
        doc.is_discarded() ? std::nullopt : RunRecordFromJson(doc, &why);
    if (!record) {
      std::cerr << *run.output_file << ":1: unreadable result file: " << why << "\n";
      own_folder.Keep();
      worst = std::max(worst, static_cast<int>(kExitInputError));
      continue;
    }
    record->cluster = o.cluster;
    record->source_file = *run.output_file;
    if (spec.launcher == sweep::Launcher::kLocal && record->nodes != run.nodes) {
      // A local sweep stands its node counts up on this one host: the run is
      // the node count it printed and was launched as, and says it was local.
      record->nodes = run.nodes;
      record->ranks_per_node = run.ranks / std::max(run.nodes, 1);
      record->tags["local_sweep"] = "one host";
    }
    // Rank 0 may run on a node whose clock is off: the run is placed in the
    // window this host launched it in (nights and baselines are by time).
    RunClock clock =
        ReconcileRunClock(record->started_at, record->ended_at, launched_at, returned_at);
    if (clock.skew_s) {
      std::cerr << "fabtrack sweep: " << run.nodes << " node(s): rank 0's clock is "
                << static_cast<long long>(std::llround(*clock.skew_s))
                << " s off this host's; the run is recorded at this host's time\n";
      record->started_at = clock.started_at;
      record->ended_at = clock.ended_at;
      record->tags["clock_skew_s"] = std::to_string(std::llround(*clock.skew_s));
    }
    store::SpoolBatch batch;
    batch.run = std::move(*record);
    if (bracketing) {
      batch.bracket = store::SpooledBracket{std::move(bracket.before), std::move(bracket.after),
                                            bracket.started_at, bracket.ended_at, bracket.seconds};
    }
    // The run and the same window's port counters of every node: raw
    // samples and per-port deltas (resets and saturation handled).
    const size_t sizes = batch.run.results.size();
    const RunStatus status = batch.run.status;
    std::vector<store::SpoolBatch> batches;
    batches.push_back(std::move(batch));
    app::StoreOutcome outcome;
    try {
      outcome = database.Store(std::move(batches));
    } catch (const app::BatchRefused& e) {
      std::cerr << "fabtrack sweep: cannot store " << *run.output_file << ": " << e.what()
                << " (the file is kept; `fabtrack ingest` it later)\n";
      own_folder.Keep();
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty())
      std::cerr << "fabtrack sweep: not stored: " << outcome.failure << "\n";
    if (!outcome.stored) continue;
    ++stored;
    const store::AppliedBatch& applied = outcome.applied.front();
    std::cout << (applied.inserted ? "stored run " : "already stored as run ") << applied.run_id
              << " (" << sizes << " sizes, " << RunStatusName(status);
    if (bracketing) std::cout << ", port counters of " << applied.bracketed_hosts << " node(s)";
    std::cout << ")" << std::endl;
  }
  std::cout << "\nsweep " << spec.sweep_id << ": " << stored << " of " << spec.node_counts.size()
            << " runs stored";
  if (database.spooled() > 0) {
    std::cout << ", " << database.spooled() << " spooled (database unavailable)";
  }
  std::cout << std::endl;
  database.Finish();
  if (worst != 0) throw CommandExit{kExitInputError};
}

}  // namespace

void SetupSweep(CLI::App& app) {
  auto o = std::make_shared<SweepOptions>();
  CLI::App* sweep = app.add_subcommand(
      "sweep", "Run fabtrack-allreduce over node counts and store the scaling curve");
  sweep->add_option("--nodes", o->nodes, "node counts: 1,2,4 or 1-4 or pow2:16 (default 1-2)");
  sweep->add_option("--ranks-per-node", o->ranks_per_node, "MPI ranks (GPUs) per node")
      ->check(CLI::PositiveNumber);
  sweep->add_option("--hostfile", o->hostfile, "mpirun with the first k hosts of this hostfile");
  sweep->add_flag("--slurm", o->slurm, "srun -N k inside the current Slurm allocation");
  sweep->add_option("--mpirun", o->mpirun,
                    "launcher prefix before -np, e.g. \"scripts/netns-fabric.sh mpirun --\"");
  sweep->add_option("--allreduce", o->allreduce, "path of fabtrack-allreduce");
  sweep->add_option("--cluster", o->cluster, "cluster name")->required();
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
  AddDatabaseOptions(sweep, &o->database);
  sweep->callback([o] {
    o->harness_args = PassthroughArgs();
    RunSweep(*o);
  });
}

}  // namespace fabtrack::cli
