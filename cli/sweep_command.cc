// fabtrack sweep: fabtrack-allreduce over node counts, one night's scaling curve.
//   fabtrack sweep --nodes 1,2,4 [--ranks-per-node R] [--hostfile F | --slurm |
//                  --mpirun "CMD ..."] --cluster NAME [--db ...] -- <harness flags>
#include <unistd.h>

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <pqxx/pqxx>
#include <random>

#include "cli/commands.h"
#include "cli/database_access.h"
#include "collector/counters/counter_deltas.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/sweep/sweep_plan.h"
#include "core/clock.h"
#include "core/run_record_json.h"
#include "core/subprocess.h"
#include "store/port_writer.h"
#include "store/run_writer.h"

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
  DatabaseOptions database;
};

// Port counters of this (the launch) host around one run.
struct Bracket {
  HostPorts before, after;
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
  for (fs::path candidate :
       {self.parent_path() / "fabtrack-allreduce",
        self.parent_path().parent_path() / "collector" / "harness" / "fabtrack-allreduce"}) {
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

std::string NewSweepId() {
  auto now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  std::random_device rd;
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", rd() & 0xffffff);
  return std::string(stamp) + "-" + suffix;
}

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
  // Open the database first: a sweep that could not store its results is
  // refused before it spends the night.
  auto connection = OpenDatabaseOrExit(o.database, SchemaPolicy::kRequireCurrent, std::cerr);
  if (spec.as_root && spec.launcher != sweep::Launcher::kSlurm) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }

  std::cout << "sweep " << spec.sweep_id << ": node counts";
  for (int k : spec.node_counts) std::cout << " " << k;
  std::cout << ", " << spec.ranks_per_node << " rank(s) per node, results in " << spec.output_dir
            << std::endl;
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
    const bool bracketing = fs::exists(o.sysfs + "/class/infiniband");
    auto t0 = std::chrono::steady_clock::now();
    if (bracketing) {
      bracket.started_at = UtcNowIso();
      bracket.before = ReadSysfsPorts(o.sysfs);
      bracket.before.host = LocalHostname();
    }
    try {
      code = RunAttached(run.argv);
    } catch (const std::exception& e) {
      std::cerr << "fabtrack sweep: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
    worst = std::max(worst, code);
    if (bracketing) {
      bracket.after = ReadSysfsPorts(o.sysfs);
      bracket.after.host = bracket.before.host;
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
      worst = std::max(worst, static_cast<int>(kExitInputError));
      continue;
    }
    record->cluster = o.cluster;
    record->source_file = *run.output_file;
    try {
      pqxx::work txn(*connection);
      store::WriteRunResult result = store::WriteRun(txn, *record);
      if (bracketing && result.inserted) {
        // The same window's port counters, attached to the run: raw samples
        // and per-port deltas (resets and saturation handled).
        store::WriteHostSample(txn, o.cluster, bracket.before, bracket.started_at, result.run_id,
                               "before");
        store::WriteHostSample(txn, o.cluster, bracket.after, bracket.ended_at, result.run_id,
                               "after");
        store::WriteRunPortDeltas(txn, o.cluster, bracket.after,
                                  ComputeDeltas(bracket.before, bracket.after, bracket.seconds),
                                  result.run_id, bracket.started_at, bracket.ended_at);
      }
      txn.commit();
      ++stored;
      std::cout << "stored run " << result.run_id << " (" << record->results.size() << " sizes, "
                << RunStatusName(record->status) << ")" << std::endl;
    } catch (const std::exception& e) {
      std::cerr << "fabtrack sweep: cannot store " << *run.output_file << ": " << e.what()
                << " (the file is kept; `fabtrack ingest` it later)\n";
      throw CommandExit{kExitDatabaseError};
    }
  }
  std::cout << "\nsweep " << spec.sweep_id << ": " << stored << " of " << spec.node_counts.size()
            << " runs stored" << std::endl;
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
                    "sysfs root whose RDMA port counters bracket each run on this host "
                    "(default /sys; skipped when it has no class/infiniband)");
  AddDatabaseOptions(sweep, &o->database);
  sweep->callback([o] {
    o->harness_args = PassthroughArgs();
    RunSweep(*o);
  });
}

}  // namespace fabtrack::cli
