// fabtrack sweep: a benchmark over node counts, one night's scaling curve.
//   fabtrack sweep --nodes 1,2,4 [--ranks-per-node R] [--hostfile F | --slurm |
//                  --mpirun "CMD ..." | --no-launcher] --cluster NAME [--db ...]
//                  [--bench nccl-tests --nccl-tests-dir DIR --collective LIST]
//                  [--ab NAME=VALUE|nccl-lib=DIR [--ab-rounds N] [--format json]]
//                  -- <benchmark flags>
#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <random>

#include "analyzer/ab_verdict.h"
#include "app/batch_store.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/counters/hw_counter_selection.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/harness/harness_args.h"
#include "collector/ingest/nccl_tests_run.h"
#include "collector/sweep/sweep_plan.h"
#include "core/ab_comparison_json.h"
#include "core/bus_bandwidth.h"
#include "core/clock.h"
#include "core/counter_deltas.h"
#include "core/node_facts.h"
#include "core/port_sample_json.h"
#include "core/run_record_json.h"
#include "core/subprocess.h"
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
                                   const std::string& sysfs, const HwCounterSelection& hw,
                                   const std::string& phase, bool local_only) {
  std::vector<HostPorts> hosts;
  if (local_only) {
    HostPorts host = ReadSysfsPorts(sysfs, hw);
    host.host = LocalHostname();
    host.kernel_release = KernelRelease();
    hosts.push_back(std::move(host));
    return hosts;
  }
  const std::string stem =
      spec.sweep_id + ".nodes" + std::to_string(run.nodes) + ".ports-" + phase + ".";
  int code = 0;
  try {
    code = RunAttached(sweep::PlanPortSampling(spec, run, SelfPath(), sysfs,
                                               spec.output_dir + "/" + stem + "{host}.json",
                                               FormatHwCounterSelection(hw)));
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

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// The nccl-tests programs of --collective in --nccl-tests-dir: `<c>_perf`,
// or `<c>_perf_mpi` (builds with NAME_SUFFIX=_mpi). "all": every one found.
std::vector<sweep::NcclTestsProgram> FindNcclTestsPrograms(const SweepOptions& o) {
  if (!o.nccl_tests_dir) {
    std::cerr << "fabtrack sweep: --bench nccl-tests needs --nccl-tests-dir DIR (where "
                 "all_reduce_perf is)\n";
    throw CommandExit{kExitUsage};
  }
  const fs::path dir = fs::absolute(*o.nccl_tests_dir);
  auto find = [&](const std::string& collective) -> std::optional<std::string> {
    for (const char* suffix : {"_perf", "_perf_mpi"}) {
      fs::path candidate = dir / (collective + suffix);
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    return std::nullopt;
  };
  std::vector<sweep::NcclTestsProgram> programs;
  if (o.collectives == "all") {
    for (const std::string& c : KnownCollectives()) {
      if (auto path = find(c)) programs.push_back({c, *path});
    }
    if (programs.empty()) {
      std::cerr << "fabtrack sweep: no nccl-tests program (*_perf) in " << dir.string() << "\n";
      throw CommandExit{kExitUsage};
    }
    return programs;
  }
  std::string list = o.collectives;
  std::replace(list.begin(), list.end(), ',', ' ');
  for (const std::string& name : SplitWords(list)) {
    std::optional<std::string> collective = CanonicalCollective(name);
    if (!collective) {
      std::cerr << "fabtrack sweep: --collective " << name << ": not an nccl-tests collective ("
                << Join(KnownCollectives(), " ") << ", or all)\n";
      throw CommandExit{kExitUsage};
    }
    std::optional<std::string> path = find(*collective);
    if (!path) {
      std::cerr << "fabtrack sweep: " << (dir / (*collective + "_perf")).string()
                << ": no such program (build nccl-tests there, or fix --nccl-tests-dir)\n";
      throw CommandExit{kExitUsage};
    }
    programs.push_back({*collective, *path});
  }
  return programs;
}

// Whether the programs write -J reports: nccl-tests 2.17 and later list
// --output_file in their usage text.
bool NcclTestsWriteJson(const SweepOptions& o, const std::string& program) {
  if (o.nccl_tests_json != "auto") return o.nccl_tests_json == "on";
  try {
    return RunProcess({program, "-h"}).output.find("--output_file") != std::string::npos;
  } catch (const std::exception& e) {
    std::cerr << "fabtrack sweep: " << program << " -h: " << e.what() << "\n";
    return false;
  }
}

// The runs of one nccl-tests launch, from its transcript and -J report; the
// problems are printed. An unusable output keeps the sweep's folder.
std::vector<RunRecord> NcclTestsRecords(const sweep::SweepSpec& spec, const sweep::PlannedRun& run,
                                        const SweepOptions& o, int exit_code,
                                        const std::string& launched_at, TemporaryFolder* own_folder,
                                        int* worst) {
  NcclTestsLaunch launch;
  launch.collective = *run.collective;
  launch.nodes = run.nodes;
  launch.expected_ranks = run.expected_ranks;
  launch.cluster = o.cluster;
  launch.launched_at = launched_at;
  launch.command_line = Join(run.argv, " ");
  launch.sweep_id = spec.sweep_id;
  for (const std::string& tag : spec.tags) {
    const size_t eq = tag.find('=');
    if (eq != std::string::npos) launch.tags[tag.substr(0, eq)] = tag.substr(eq + 1);
  }
  launch.exit_code = exit_code;
  launch.transcript_path = *run.transcript_file;
  launch.transcript = ReadFile(*run.transcript_file);
  if (run.json_file && fs::exists(*run.json_file)) {
    launch.json_path = *run.json_file;
    launch.json = ReadFile(*run.json_file);
  }
  NcclTestsRuns built = BuildNcclTestsRuns(launch);
  for (const std::string& problem : built.problems) std::cerr << problem << "\n";
  if (built.runs.empty()) {
    own_folder->Keep();
    *worst = std::max(*worst, static_cast<int>(kExitInputError));
  }
  return std::move(built.runs);
}

// fabtrack-allreduce's result file of `run`. Whatever the exit code, what was
// measured is kept: a run cut short left a "partial" result file.
std::optional<RunRecord> HarnessRecord(const sweep::PlannedRun& run, int exit_code,
                                       TemporaryFolder* own_folder, int* worst) {
  std::ifstream in(*run.output_file);
  if (!in) {
    std::cerr << "fabtrack sweep: " << run.nodes << " node(s): no result file (exit " << exit_code
              << ")\n";
    // fabtrack-allreduce exits 2 on bad flags before measuring anything:
    // every other node count would fail the same way.
    if (exit_code == kExitUsage) throw CommandExit{kExitUsage};
    return std::nullopt;
  }
  std::string why;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, false);
  std::optional<RunRecord> record =
      doc.is_discarded() ? std::nullopt : RunRecordFromJson(doc, &why);
  if (!record) {
    std::cerr << *run.output_file << ":1: unreadable result file: " << why << "\n";
    own_folder->Keep();
    *worst = std::max(*worst, static_cast<int>(kExitInputError));
  }
  return record;
}

// The facts of the run's nodes (core/node_facts.h): from the port sample
// every node took before it (firmware, links, kernel), or, without one, from
// this host when the run's nodes are this host (a local sweep, no launcher).
// A multi-node run without a bracket records none rather than this host's.
NodeFacts RunNodeFacts(const sweep::SweepSpec& spec, const Bracket& bracket, bool bracketing,
                       const std::string& sysfs) {
  std::vector<std::pair<std::string, NodeFacts>> per_host;
  if (bracketing) {
    for (const HostPorts& host : bracket.before) {
      per_host.push_back({host.host, HostFactsFromPorts(host)});
    }
  } else if (spec.launcher == sweep::Launcher::kLocal ||
             spec.launcher == sweep::Launcher::kDirect) {
    HostPorts host = ReadSysfsPorts(sysfs);
    host.kernel_release = KernelRelease();
    per_host.push_back({LocalHostname(), HostFactsFromPorts(host)});
  }
  return MergeNodeFacts(per_host);
}

// What the runs of one plan came to, over all the plans of a command.
struct SweepTally {
  int worst = 0;
  int stored = 0;
  size_t planned = 0;
  bool ab_spooled = false;  // the A/B comparison is among the spooled batches
};

// Runs every launch of `spec`'s plan, each bracketed by port counters, and
// stores (or spools) its runs with `tags` added. Progress goes to `progress`;
// the runs as stored are appended to `kept` when it is given (`--ab` judges
// them), and their ids in the database to `kept_ids` (nullopt: spooled).
void RunPlan(const sweep::SweepSpec& spec, const SweepOptions& o, app::BatchStore& database,
             TemporaryFolder& own_folder, const std::map<std::string, std::string>& tags,
             std::ostream& progress, SweepTally* tally, std::vector<RunRecord>* kept,
             std::vector<std::optional<int64_t>>* kept_ids = nullptr) {
  // Port counters bracket every run on every node ("nodes"), on this host
  // only ("local"), or not at all. "auto": where this host has RDMA ports,
  // every node; a local sweep's nodes are this host.
  bool bracketing = o.ports != "off";
  if (o.ports == "auto") bracketing = fs::exists(o.sysfs + "/class/infiniband");
  const bool local_ports = o.ports == "local" || spec.launcher == sweep::Launcher::kLocal;
  const std::vector<sweep::PlannedRun> plan = sweep::PlanSweep(spec);
  tally->planned += plan.size();
  for (const sweep::PlannedRun& run : plan) {
    if (run.hostfile_path) {
      std::ofstream hostfile(*run.hostfile_path);
      for (const auto& line : run.hostfile_lines) hostfile << line << "\n";
    }
    progress << "\n== " << run.nodes << " node(s), " << run.ranks << " rank(s)";
    if (run.collective) progress << ", " << *run.collective;
    progress << std::endl;
    int code = 0;
    Bracket bracket;
    auto t0 = std::chrono::steady_clock::now();
    if (bracketing) {
      bracket.started_at = UtcNowIso();
      bracket.before = SampleNodes(spec, run, o.sysfs, o.hw_counters, "before", local_ports);
    }
    const std::string launched_at = UtcNowIso();
    try {
      code = run.transcript_file ? RunAttachedWithTranscript(run.argv, *run.transcript_file)
                                 : RunAttached(run.argv);
    } catch (const std::exception& e) {
      std::cerr << "fabtrack sweep: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
    tally->worst = std::max(tally->worst, code);
    const std::string returned_at = UtcNowIso();
    if (bracketing) {
      bracket.after = SampleNodes(spec, run, o.sysfs, o.hw_counters, "after", local_ports);
      bracket.ended_at = UtcNowIso();
      bracket.seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    const NodeFacts facts = RunNodeFacts(spec, bracket, bracketing, o.sysfs);
    std::vector<RunRecord> records;
    if (spec.benchmark == sweep::Benchmark::kNcclTests) {
      records = NcclTestsRecords(spec, run, o, code, launched_at, &own_folder, &tally->worst);
    } else if (std::optional<RunRecord> record =
                   HarnessRecord(run, code, &own_folder, &tally->worst)) {
      records.push_back(std::move(*record));
    }
    std::vector<store::SpoolBatch> batches;
    const size_t first_kept = kept ? kept->size() : 0;
    for (RunRecord& record : records) {
      record.cluster = o.cluster;
      for (const auto& [key, value] : tags) record.tags[key] = value;
      // The sweep's sample (under --sysfs, every node) over the harness's own.
      for (const auto& [key, value] : facts) record.node_facts[key] = value;
      if (spec.benchmark == sweep::Benchmark::kFabtrackAllreduce) {
        record.source_file = *run.output_file;
        record.parameters["fabtrack_version"] = FABTRACK_VERSION;
      }
      if (spec.launcher == sweep::Launcher::kLocal && run.nodes > 1) {
        // A local sweep stands its node counts up on this one host: the run is
        // the node count it was launched as, and says it was local.
        record.nodes = run.nodes;
        record.ranks_per_node = run.ranks / std::max(run.nodes, 1);
        record.tags["local_sweep"] = "one host";
      }
      // Rank 0 may run on a node whose clock is off: the run is placed in the
      // window this host launched it in (nights and baselines are by time).
      RunClock clock =
          ReconcileRunClock(record.started_at, record.ended_at, launched_at, returned_at);
      if (clock.skew_s) {
        std::cerr << "fabtrack sweep: " << run.nodes << " node(s): rank 0's clock is "
                  << static_cast<long long>(std::llround(*clock.skew_s))
                  << " s off this host's; the run is recorded at this host's time\n";
        record.started_at = clock.started_at;
        record.ended_at = clock.ended_at;
        record.tags["clock_skew_s"] = std::to_string(std::llround(*clock.skew_s));
      }
      if (!record.ended_at) record.ended_at = returned_at;
      if (kept) kept->push_back(record);
      store::SpoolBatch batch;
      batch.run = std::move(record);
      if (bracketing) {
        batch.bracket = store::SpooledBracket{bracket.before, bracket.after, bracket.started_at,
                                              bracket.ended_at, bracket.seconds};
      }
      batches.push_back(std::move(batch));
    }
    if (batches.empty()) continue;
    // Each run with the same window's port counters of every node: raw
    // samples and per-port deltas (resets and saturation handled), in one
    // transaction.
    std::vector<std::pair<size_t, RunStatus>> shapes;
    for (const auto& batch : batches)
      shapes.push_back({batch.run.results.size(), batch.run.status});
    const std::string stored_from = run.output_file.value_or(run.transcript_file.value_or(""));
    app::StoreOutcome outcome;
    try {
      outcome = database.Store(std::move(batches));
    } catch (const app::BatchRefused& e) {
      std::cerr << "fabtrack sweep: cannot store " << stored_from << ": " << e.what()
                << " (the file is kept; `fabtrack ingest` it later)\n";
      own_folder.Keep();
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty())
      std::cerr << "fabtrack sweep: not stored: " << outcome.failure << "\n";
    if (kept && kept_ids) kept_ids->resize(kept->size());
    if (!outcome.stored) continue;
    ++tally->stored;
    for (size_t i = 0; kept && kept_ids && i < outcome.applied.size(); ++i) {
      (*kept_ids)[first_kept + i] = outcome.applied[i].run_id;
    }
    for (size_t i = 0; i < outcome.applied.size() && i < shapes.size(); ++i) {
      const store::AppliedBatch& applied = outcome.applied[i];
      progress << (applied.inserted ? "stored run " : "already stored as run ") << applied.run_id
               << " (" << shapes[i].first << " sizes, " << RunStatusName(shapes[i].second);
      if (bracketing) progress << ", port counters of " << applied.bracketed_hosts << " node(s)";
      progress << ")" << std::endl;
    }
  }
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

// Why side B could not load NCCL from `dir` (nccl-lib=DIR), or "": the
// folder must exist and hold a readable libnccl.so.2 that is a shared
// library for this machine. Checked on this host before any round runs (the
// ranks' nodes see the same path on a shared or identically built image):
// otherwise every rank would quietly load the default NCCL and the verdict
// would compare a library with itself.
std::string NcclLibraryProblem(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) {
    return dir + ": not a folder (give the folder that holds libnccl.so.2)";
  }
  const std::string library = (fs::path(dir) / "libnccl.so.2").string();
  const int fd = open(library.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? dir + ": no libnccl.so.2 in this folder"
                           : library + ": " + std::strerror(errno);
  }
  Elf64_Ehdr header{};
  const ssize_t got = read(fd, &header, sizeof header);
  const int read_errno = errno;
  close(fd);
  if (got < 0) return library + ": " + std::strerror(read_errno);
  const bool elf = got == static_cast<ssize_t>(sizeof header) &&
                   std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0;
  if (!elf) return library + ": not a shared library (no ELF header)";
  Elf64_Ehdr self{};
  if (const int me = open("/proc/self/exe", O_RDONLY | O_CLOEXEC); me >= 0) {
    if (read(me, &self, sizeof self) != static_cast<ssize_t>(sizeof self)) self = {};
    close(me);
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN ||
      (self.e_machine != 0 && header.e_machine != self.e_machine)) {
    return library + ": not a 64-bit shared library for this machine";
  }
  return "";
}

// `--ab SETTING` checked before the sweep starts (nothing printed, nothing
// run): a malformed setting or an NCCL folder side B could not load is a
// usage error naming what is wrong. Returns the parsed setting.
sweep::AbSetting CheckAbSetting(const std::string& text) {
  std::string why;
  std::optional<sweep::AbSetting> setting = sweep::ParseAbSetting(text, &why);
  if (setting && setting->nccl_lib) why = NcclLibraryProblem(setting->value);
  if (setting && why.empty()) return *setting;
  std::cerr << "fabtrack sweep: --ab " << text << ": " << why << "\n";
  throw CommandExit{kExitUsage};
}

// `--ab SETTING`: the plan run once per side per round in the order AbOrder
// gives (A B B A ...), side B's ranks with the setting, every run tagged
// with the comparison's id, side and round; then the verdict, printed and
// stored (or spooled after the runs).
void RunAbSweep(sweep::SweepSpec spec, const sweep::AbSetting& setting, const SweepOptions& o,
                app::BatchStore& database, TemporaryFolder& own_folder, SweepTally* tally) {
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  const auto rank_env = sweep::AbRankEnvironment(setting, ld_path ? ld_path : "");
  const bool json = o.format == "json";
  StdoutAside aside(json);
  AbRecord record;
  record.cluster = o.cluster;
  record.ab_id = spec.sweep_id;
  record.setting = *o.ab;
  record.rounds = o.ab_rounds;
  record.order = sweep::AbOrder(o.ab_rounds);
  std::cout << "A/B " << record.ab_id << ": side B with " << record.setting << ", order "
            << record.order << std::endl;
  std::vector<RunRecord> kept;
  std::vector<std::optional<int64_t>> kept_ids;  // per kept run; nullopt: spooled
  std::vector<std::pair<char, int>> sides;       // per kept run
  for (size_t i = 0; i < record.order.size(); ++i) {
    const char side = record.order[i];
    const int round = static_cast<int>(i / 2) + 1;
    spec.sweep_id = record.ab_id + "." + side + std::to_string(round);
    spec.rank_env = side == 'B' ? rank_env : decltype(rank_env){};
    std::map<std::string, std::string> tags = {{"ab_id", record.ab_id},
                                               {"ab_side", std::string(1, side)},
                                               {"ab_round", std::to_string(round)}};
    if (side == 'B') tags["ab_setting"] = record.setting;
    std::cout << "\n-- side " << side << ", round " << round << " (sweep " << spec.sweep_id << ")"
              << std::endl;
    const size_t before = kept.size();
    RunPlan(spec, o, database, own_folder, tags, std::cout, tally, &kept, &kept_ids);
    for (size_t k = before; k < kept.size(); ++k) sides.push_back({side, round});
  }
  std::vector<analyzer::AbRun> runs;
  for (size_t k = 0; k < kept.size(); ++k)
    runs.push_back({sides[k].first, sides[k].second, &kept[k]});
  analyzer::JudgeAbRuns(runs, &record);
  record.compared_at = UtcNowIso();
  store::SpoolBatch batch;
  batch.kind = store::SpoolBatch::Kind::kAb;
  batch.ab = record;
  std::optional<int64_t> comparison_id;
  try {
    app::StoreOutcome outcome = database.Store({std::move(batch)});
    if (outcome.stored && !outcome.applied.empty()) {
      comparison_id = outcome.applied.front().ab_comparison_id;
      std::cout << "\nstored A/B comparison " << *comparison_id << " ("
                << outcome.applied.front().ab_linked_runs << " runs linked)" << std::endl;
    } else {
      tally->ab_spooled = true;
      std::cout << "\nA/B comparison spooled (database unavailable)" << std::endl;
    }
  } catch (const app::BatchRefused& e) {
    std::cerr << "fabtrack sweep: the database refused the A/B comparison: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  if (json) {
    aside.Restore();
    // The verdict with where it is stored: the comparison's id (`runs ab`)
    // and each run's (`runs show`, `diff`); null for what was spooled.
    nlohmann::json doc = AbRecordToJson(record);
    doc["comparison_id"] = comparison_id ? nlohmann::json(*comparison_id) : nlohmann::json();
    doc["runs"] = nlohmann::json::array();
    for (size_t k = 0; k < kept.size(); ++k) {
      const std::optional<int64_t> id = k < kept_ids.size() ? kept_ids[k] : std::nullopt;
      doc["runs"].push_back({{"run_id", id ? nlohmann::json(*id) : nlohmann::json()},
                             {"side", std::string(1, sides[k].first)},
                             {"round", sides[k].second}});
    }
    std::cout << doc.dump(2) << std::endl;
  } else {
    std::cout << "\n" << analyzer::AbVerdictText(record);
  }
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
    spec.nccl_tests = FindNcclTestsPrograms(o);
    spec.nccl_tests_json = NcclTestsWriteJson(o, spec.nccl_tests.front().path);
  } else {
    if (o.collectives != "all_reduce") {
      std::cerr << "fabtrack sweep: fabtrack-allreduce runs all_reduce only; --collective "
                << o.collectives << " needs --bench nccl-tests\n";
      throw CommandExit{kExitUsage};
    }
    spec.allreduce = o.allreduce ? *o.allreduce : FindAllreduce().value_or("");
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
  SweepTally tally;
  if (o.ab) {
    RunAbSweep(spec, *ab_setting, o, database, own_folder, &tally);
  } else {
    RunPlan(spec, o, database, own_folder, {}, std::cout, &tally, nullptr);
  }
  progress << "\nsweep " << spec.sweep_id << ": " << tally.stored << " of " << tally.planned
           << " runs stored";
  if (database.spooled() > 0) {
    // Batches: the runs', and with --ab the comparison's after them.
    const int runs_spooled = database.spooled() - (tally.ab_spooled ? 1 : 0);
    if (runs_spooled > 0) progress << ", " << runs_spooled << " spooled";
    if (tally.ab_spooled) {
      progress << (runs_spooled > 0 ? ", and " : "; ") << "the A/B comparison spooled";
    }
    progress << " (database unavailable)";
  }
  progress << std::endl;
  database.Finish();
  if (tally.worst != 0) throw CommandExit{kExitInputError};
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
  AddFormatOption(sweep, &o->format, {"text", "json"});
  AddDatabaseOptions(sweep, &o->database);
  sweep->callback([o] {
    o->harness_args = PassthroughArgs();
    RunSweep(*o);
  });
}

}  // namespace fabtrack::cli
