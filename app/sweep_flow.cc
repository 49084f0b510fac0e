#include "app/sweep_flow.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>

#include "analyzer/ab_verdict.h"
#include "app/batch_store.h"
#include "app/this_process.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/ingest/nccl_tests_run.h"
#include "core/clock.h"
#include "core/exit_code.h"
#include "core/node_facts.h"
#include "core/port_sample_json.h"
#include "core/run_record_json.h"
#include "core/subprocess.h"
#include "core/text.h"

namespace fabtrack::app {
namespace {
namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

// Removes a folder when it goes out of scope (every exit path, exceptions
// included), unless told to keep it.
class TemporaryFolder {
 public:
  TemporaryFolder(std::string path, std::ostream& err) : path_(std::move(path)), err_(err) {}
  ~TemporaryFolder() {
    if (path_.empty()) return;
    if (keep_) {
      err_ << "fabtrack sweep: kept " << path_ << "\n";
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
  std::ostream& err_;
  bool keep_ = false;
};

// One sample of every node of `run`: the run's launcher starts one
// `fabtrack counters snapshot` per node (or reads this host for a local
// sweep), each writing its own file in the sweep's output directory (which,
// like the result files, must be shared with the nodes). A file that is not
// a sample is reported and skipped; nothing is fatal: the benchmark matters
// more than its bracket.
std::vector<HostPorts> SampleNodes(const sweep::SweepSpec& spec, const sweep::PlannedRun& run,
                                   const std::string& sysfs, const HwCounterSelection& hw,
                                   const std::string& phase, bool local_only, std::ostream& err) {
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
    err << "fabtrack sweep: port counters " << phase << ": " << e.what() << "\n";
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
      err << file.string() << ":1: not a port sample (" << why << "), skipped\n";
      continue;
    }
    hosts.push_back(std::move(*host));
  }
  if (code != 0 || hosts.size() != static_cast<size_t>(run.nodes)) {
    err << "fabtrack sweep: port counters " << phase << ": " << hosts.size() << " of " << run.nodes
        << " node(s) sampled (launcher exit " << code << ")\n";
  }
  return hosts;
}

// The HCA port counters of every node of a run (or of this host only),
// before and after it: the batch's bracket (raw samples and per-port deltas,
// stored in the run's transaction), and the facts of the run's nodes
// (core/node_facts.h: firmware, links, kernel) from the samples taken before
// it, over the harness's own.
class HostPortBracket : public RunBracket {
 public:
  HostPortBracket(std::string sysfs, HwCounterSelection hw, bool local_only, std::ostream& err)
      : sysfs_(std::move(sysfs)), hw_(std::move(hw)), local_only_(local_only), err_(err) {}

  void Before(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) override {
    window_ = {};
    t0_ = std::chrono::steady_clock::now();
    window_.started_at = UtcNowIso();
    window_.before = SampleNodes(spec, run, sysfs_, hw_, "before", local_only_, err_);
  }

  void After(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) override {
    window_.after = SampleNodes(spec, run, sysfs_, hw_, "after", local_only_, err_);
    window_.ended_at = UtcNowIso();
    window_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0_).count();
  }

  void Attach(store::SpoolBatch* batch) const override {
    std::vector<std::pair<std::string, NodeFacts>> per_host;
    for (const HostPorts& host : window_.before) {
      per_host.push_back({host.host, HostFactsFromPorts(host)});
    }
    // The sweep's sample (under --sysfs, every node) over the harness's own.
    for (const auto& [key, value] : MergeNodeFacts(per_host)) batch->run.node_facts[key] = value;
    batch->bracket = window_;
  }

 private:
  std::string sysfs_;
  HwCounterSelection hw_;
  bool local_only_;
  std::ostream& err_;
  store::SpooledBracket window_;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace

struct SweepFlow::State {
  State(SweepRequest r, const DatabaseChoice& database, SweepProgress& p, std::ostream& e)
      : request(std::move(r)),
        progress(p),
        err(e),
        own_folder(request.own_output_dir ? request.spec.output_dir : "", e),
        folder_created(CreateFolder(request.spec.output_dir, e)),
        store(database, e) {}

  // The output folder before the database: a sweep that cannot write its
  // results stops before the database is touched.
  static bool CreateFolder(const std::string& dir, std::ostream& err) {
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) {
      err << "fabtrack sweep: cannot create " << dir << ": " << ec.message() << "\n";
      throw CommandExit{kExitInputError};
    }
    return true;
  }

  SweepRequest request;
  SweepProgress& progress;
  std::ostream& err;
  // A folder of our own making goes when the sweep ends, whichever way it
  // ends, unless it holds a result file that was neither stored nor spooled.
  // (Declared before the store: the store ends first.)
  TemporaryFolder own_folder;
  bool folder_created;
  // A database that is away (now or later in the night) does not stop the
  // sweep: its runs are spooled and stored when it is back.
  BatchStore store;
  bool port_bracketing = false;
  std::vector<std::shared_ptr<RunBracket>> brackets;  // the ports' first
  SweepTally tally;

  // The runs as stored, with their ids (nullopt: spooled), when kept (--ab).
  struct Kept {
    RunRecord run;
    std::optional<int64_t> run_id;
  };

  std::vector<RunRecord> NcclTestsRecords(const sweep::SweepSpec& spec,
                                          const sweep::PlannedRun& run, int exit_code,
                                          const std::string& launched_at);
  std::optional<RunRecord> HarnessRecord(const sweep::PlannedRun& run, int exit_code);
  void RunPlan(const sweep::SweepSpec& spec, const std::map<std::string, std::string>& tags,
               std::vector<Kept>* kept);
};

// The runs of one nccl-tests launch, from its transcript and -J report; the
// problems are reported. An unusable output keeps the sweep's folder.
std::vector<RunRecord> SweepFlow::State::NcclTestsRecords(const sweep::SweepSpec& spec,
                                                          const sweep::PlannedRun& run,
                                                          int exit_code,
                                                          const std::string& launched_at) {
  NcclTestsLaunch launch;
  launch.collective = *run.collective;
  launch.nodes = run.nodes;
  launch.expected_ranks = run.expected_ranks;
  launch.cluster = request.cluster;
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
  for (const std::string& problem : built.problems) err << problem << "\n";
  if (built.runs.empty()) {
    own_folder.Keep();
    tally.worst_exit = std::max(tally.worst_exit, static_cast<int>(kExitInputError));
  }
  return std::move(built.runs);
}

// fabtrack-allreduce's result file of `run`. Whatever the exit code, what was
// measured is kept: a run cut short left a "partial" result file.
std::optional<RunRecord> SweepFlow::State::HarnessRecord(const sweep::PlannedRun& run,
                                                         int exit_code) {
  std::ifstream in(*run.output_file);
  if (!in) {
    err << "fabtrack sweep: " << run.nodes << " node(s): no result file (exit " << exit_code
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
    err << *run.output_file << ":1: unreadable result file: " << why << "\n";
    own_folder.Keep();
    tally.worst_exit = std::max(tally.worst_exit, static_cast<int>(kExitInputError));
  }
  return record;
}

// Runs every launch of `spec`'s plan inside the brackets, and stores (or
// spools) its runs with `tags` added; the runs as stored are appended to
// `kept` when it is given (`--ab` judges them).
void SweepFlow::State::RunPlan(const sweep::SweepSpec& spec,
                               const std::map<std::string, std::string>& tags,
                               std::vector<Kept>* kept) {
  const std::vector<sweep::PlannedRun> plan = sweep::PlanSweep(spec);
  tally.planned += plan.size();
  for (const sweep::PlannedRun& run : plan) {
    if (run.hostfile_path) {
      std::ofstream hostfile(*run.hostfile_path);
      for (const auto& line : run.hostfile_lines) hostfile << line << "\n";
    }
    progress.Launching(run);
    for (const auto& bracket : brackets) bracket->Before(spec, run);
    const std::string launched_at = UtcNowIso();
    int code = 0;
    try {
      code = run.transcript_file ? RunAttachedWithTranscript(run.argv, *run.transcript_file)
                                 : RunAttached(run.argv);
    } catch (const std::exception& e) {
      err << "fabtrack sweep: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
    tally.worst_exit = std::max(tally.worst_exit, code);
    const std::string returned_at = UtcNowIso();
    for (auto b = brackets.rbegin(); b != brackets.rend(); ++b) (*b)->After(spec, run);
    // Without a port bracket, the facts of the run's nodes are this host's
    // when the run's nodes are this host (a local sweep, no launcher); a
    // multi-node run records none rather than this host's.
    NodeFacts local_facts;
    if (!port_bracketing &&
        (spec.launcher == sweep::Launcher::kLocal || spec.launcher == sweep::Launcher::kDirect)) {
      HostPorts host = ReadSysfsPorts(request.sysfs);
      host.kernel_release = KernelRelease();
      local_facts = MergeNodeFacts({{LocalHostname(), HostFactsFromPorts(host)}});
    }
    std::vector<RunRecord> records;
    if (spec.benchmark == sweep::Benchmark::kNcclTests) {
      records = NcclTestsRecords(spec, run, code, launched_at);
    } else if (std::optional<RunRecord> record = HarnessRecord(run, code)) {
      records.push_back(std::move(*record));
    }
    std::vector<store::SpoolBatch> batches;
    const size_t first_kept = kept ? kept->size() : 0;
    for (RunRecord& record : records) {
      record.cluster = request.cluster;
      for (const auto& [key, value] : tags) record.tags[key] = value;
      for (const auto& [key, value] : local_facts) record.node_facts[key] = value;
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
        err << "fabtrack sweep: " << run.nodes << " node(s): rank 0's clock is "
            << static_cast<long long>(std::llround(*clock.skew_s))
            << " s off this host's; the run is recorded at this host's time\n";
        record.started_at = clock.started_at;
        record.ended_at = clock.ended_at;
        record.tags["clock_skew_s"] = std::to_string(std::llround(*clock.skew_s));
      }
      if (!record.ended_at) record.ended_at = returned_at;
      store::SpoolBatch batch;
      batch.run = std::move(record);
      for (const auto& bracket : brackets) bracket->Attach(&batch);
      if (kept) kept->push_back({batch.run, std::nullopt});
      batches.push_back(std::move(batch));
    }
    if (batches.empty()) continue;
    // Each run with the same window's measurements (the port counters of
    // every node: raw samples and per-port deltas, resets and saturation
    // handled), in one transaction.
    std::vector<StoredRun> shapes;
    for (const auto& batch : batches) {
      StoredRun shape;
      shape.sizes = batch.run.results.size();
      shape.status = batch.run.status;
      shape.fabric_window = batch.fabric_window;
      shapes.push_back(shape);
    }
    const std::string stored_from = run.output_file.value_or(run.transcript_file.value_or(""));
    StoreOutcome outcome;
    try {
      outcome = store.Store(std::move(batches));
    } catch (const BatchRefused& e) {
      err << "fabtrack sweep: cannot store " << stored_from << ": " << e.what()
          << " (the file is kept; `fabtrack ingest` it later)\n";
      own_folder.Keep();
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty()) err << "fabtrack sweep: not stored: " << outcome.failure << "\n";
    if (!outcome.stored) continue;
    ++tally.stored;
    for (size_t i = 0; kept && i < outcome.applied.size(); ++i) {
      if (first_kept + i < kept->size()) (*kept)[first_kept + i].run_id = outcome.applied[i].run_id;
    }
    for (size_t i = 0; i < outcome.applied.size() && i < shapes.size(); ++i) {
      const store::AppliedBatch& applied = outcome.applied[i];
      StoredRun stored = shapes[i];
      stored.run_id = applied.run_id;
      stored.inserted = applied.inserted;
      if (port_bracketing) stored.bracketed_hosts = applied.bracketed_hosts;
      progress.Stored(stored);
    }
  }
}

SweepFlow::SweepFlow(SweepRequest request, const DatabaseChoice& database, SweepProgress& progress,
                     std::ostream& err)
    : state_(std::make_unique<State>(std::move(request), database, progress, err)) {
  State& s = *state_;
  const sweep::SweepSpec& spec = s.request.spec;
  if (spec.as_root && spec.launcher != sweep::Launcher::kSlurm) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  // Port counters bracket every run on every node ("nodes"), on this host
  // only ("local"), or not at all. "auto": where this host has RDMA ports,
  // every node; a local sweep's nodes are this host.
  const PortBracketing ports = s.request.ports;
  s.port_bracketing = ports != PortBracketing::kOff;
  if (ports == PortBracketing::kAuto) {
    s.port_bracketing = fs::exists(s.request.sysfs + "/class/infiniband");
  }
  const bool local_ports =
      ports == PortBracketing::kLocal || spec.launcher == sweep::Launcher::kLocal;
  if (s.port_bracketing) {
    s.brackets.push_back(std::make_shared<HostPortBracket>(s.request.sysfs, s.request.hw_counters,
                                                           local_ports, s.err));
  }
  for (const auto& bracket : s.request.brackets) s.brackets.push_back(bracket);
}

SweepFlow::~SweepFlow() = default;

const sweep::SweepSpec& SweepFlow::spec() const { return state_->request.spec; }

void SweepFlow::RunPlan() { state_->RunPlan(state_->request.spec, {}, nullptr); }

AbSweepResult SweepFlow::RunAb(const sweep::AbSetting& setting, const std::string& setting_text,
                               int rounds) {
  State& s = *state_;
  sweep::SweepSpec spec = s.request.spec;
  const char* ld_path = std::getenv("LD_LIBRARY_PATH");
  const auto rank_env = sweep::AbRankEnvironment(setting, ld_path ? ld_path : "");
  AbSweepResult result;
  AbRecord& record = result.record;
  record.cluster = s.request.cluster;
  record.ab_id = spec.sweep_id;
  record.setting = setting_text;
  record.rounds = rounds;
  record.order = sweep::AbOrder(rounds);
  s.progress.AbStarting(record);
  std::vector<State::Kept> kept;
  for (size_t i = 0; i < record.order.size(); ++i) {
    const char side = record.order[i];
    const int round = static_cast<int>(i / 2) + 1;
    spec.sweep_id = record.ab_id + "." + side + std::to_string(round);
    spec.rank_env = side == 'B' ? rank_env : decltype(rank_env){};
    std::map<std::string, std::string> tags = {{"ab_id", record.ab_id},
                                               {"ab_side", std::string(1, side)},
                                               {"ab_round", std::to_string(round)}};
    if (side == 'B') tags["ab_setting"] = record.setting;
    s.progress.AbSideStarting(side, round, spec.sweep_id);
    const size_t before = kept.size();
    s.RunPlan(spec, tags, &kept);
    for (size_t k = before; k < kept.size(); ++k) {
      result.runs.push_back({kept[k].run_id, side, round});
    }
  }
  std::vector<analyzer::AbRun> runs;
  for (size_t k = 0; k < kept.size(); ++k) {
    runs.push_back({result.runs[k].side, result.runs[k].round, &kept[k].run});
  }
  analyzer::JudgeAbRuns(runs, &record);
  record.compared_at = UtcNowIso();
  store::SpoolBatch batch;
  batch.kind = store::SpoolBatch::Kind::kAb;
  batch.ab = record;
  try {
    StoreOutcome outcome = s.store.Store({std::move(batch)});
    if (outcome.stored && !outcome.applied.empty()) {
      result.comparison_id = outcome.applied.front().ab_comparison_id;
      s.progress.AbStored(result.comparison_id, outcome.applied.front().ab_linked_runs);
    } else {
      s.tally.ab_spooled = true;
      s.progress.AbStored(std::nullopt, 0);
    }
  } catch (const BatchRefused& e) {
    s.err << "fabtrack sweep: the database refused the A/B comparison: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return result;
}

SweepTally SweepFlow::tally() const {
  SweepTally tally = state_->tally;
  // Batches: the runs', and with --ab the comparison's after them.
  tally.runs_spooled = state_->store.spooled() - (tally.ab_spooled ? 1 : 0);
  return tally;
}

void SweepFlow::Finish() {
  state_->store.Finish();
  if (state_->tally.worst_exit != 0) throw CommandExit{kExitInputError};
}

}  // namespace fabtrack::app
