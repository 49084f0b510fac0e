// `fabtrack sweep`'s flow: run every launch of a plan (collector/sweep), each
// bracketed by measurements taken just before and just after it (the run's
// nodes' HCA port counters; later a switch-fabric scan), turn what the
// benchmark left into run records (collector/ingest), and store each launch's
// records with its brackets in one transaction, or spool them
// (app/batch_store). `--ab`: the plan once per side per round, then the
// verdict (analyzer/ab_verdict), stored the same way. The command parses the
// flags into a SweepRequest, prints through SweepProgress and prints the
// verdict; nothing of a run goes back through it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/counters/hw_counter_selection.h"
#include "collector/sweep/sweep_plan.h"
#include "core/ab_comparison.h"
#include "core/database_choice.h"
#include "core/run_fabric_window.h"
#include "core/run_record.h"
#include "store/spool.h"

namespace fabtrack::app {

// A measurement taken around every launch of the plan: Before just before
// the benchmark starts, After just after it returned, and what it measured
// attached to each batch (run record) of that launch, so that it is stored in
// the run's transaction. Brackets are nested: Before in list order, After in
// reverse order, so the first bracket's window holds every other one's. A
// bracket that cannot measure says why on the flow's error stream and
// attaches what it has (nothing is fatal: the benchmark matters more than
// its bracket).
class RunBracket {
 public:
  virtual ~RunBracket() = default;
  // `spec` is the plan's (under --ab, the side's: its own sweep_id).
  virtual void Before(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) = 0;
  virtual void After(const sweep::SweepSpec& spec, const sweep::PlannedRun& run) = 0;
  // Called once per batch of the launch, after After.
  virtual void Attach(store::SpoolBatch* batch) const = 0;
};

// Which nodes' HCA port counters bracket each run (`sweep --ports`).
enum class PortBracketing {
  kAuto,   // every node, when this host has class/infiniband under the sysfs root
  kNodes,  // every node of the run (one `counters snapshot` per node, through the launcher)
  kLocal,  // this host only
  kOff,
};

struct SweepRequest {
  // The validated plan (sweep::ValidateSpec), its sweep_id and output_dir set.
  sweep::SweepSpec spec;
  // The output folder was made for this sweep: it goes when the flow ends,
  // unless it holds a result file that was neither stored nor spooled.
  bool own_output_dir = false;
  std::string cluster;
  PortBracketing ports = PortBracketing::kAuto;
  std::string sysfs = "/sys";
  HwCounterSelection hw_counters;  // what the port brackets' samples read
  // More brackets after the HCA ports' (a switch-fabric scan, ...).
  std::vector<std::shared_ptr<RunBracket>> brackets;
};

// One run as stored (or found already stored).
struct StoredRun {
  int64_t run_id = 0;
  bool inserted = false;  // false: already stored as this run
  size_t sizes = 0;       // result rows
  RunStatus status = RunStatus::kComplete;
  std::optional<size_t> bracketed_hosts;  // nodes whose port counters were attached, when bracketed
  // The switch side of its window (`--fabric-scan`), when both scans were made.
  std::optional<RunFabricWindow> fabric_window;
};

// What the flow says while it runs; the command prints it. Diagnostics go to
// the flow's error stream.
class SweepProgress {
 public:
  virtual ~SweepProgress() = default;
  virtual void Launching(const sweep::PlannedRun& run) = 0;
  virtual void Stored(const StoredRun& run) = 0;
  // --ab
  virtual void AbStarting(const AbRecord& record) = 0;
  virtual void AbSideStarting(char side, int round, const std::string& sweep_id) = 0;
  // comparison_id: nullopt when spooled (the database is away).
  virtual void AbStored(std::optional<int64_t> comparison_id, int linked_runs) = 0;
};

// What the runs came to so far.
struct SweepTally {
  int worst_exit = 0;    // the worst launch's exit code, or 1 for an unusable result file
  int stored = 0;        // launches whose runs were stored
  size_t planned = 0;    // launches planned
  int runs_spooled = 0;  // batches of runs spooled
  bool ab_spooled = false;
};

// `--ab`: the verdict, and where it and its runs are stored.
struct AbSweepResult {
  AbRecord record;
  std::optional<int64_t> comparison_id;  // nullopt: spooled
  struct Run {
    std::optional<int64_t> run_id;  // nullopt: spooled
    char side = 'A';
    int round = 1;
  };
  std::vector<Run> runs;  // in the order they ran
};

class SweepFlow {
 public:
  // Creates the output folder (CommandExit{1} when it cannot), then connects
  // to `database` (replaying its spool) or notes why it cannot: the runs are
  // spooled then. Diagnostics go to `err`.
  SweepFlow(SweepRequest request, const DatabaseChoice& database, SweepProgress& progress,
            std::ostream& err);
  ~SweepFlow();
  SweepFlow(const SweepFlow&) = delete;
  SweepFlow& operator=(const SweepFlow&) = delete;

  const sweep::SweepSpec& spec() const;

  // Runs every launch of the plan and stores (or spools) its runs. Throws
  // CommandExit{1} when a launch cannot be started, {2} when the harness
  // refused its flags, {3} when the database refused the runs.
  void RunPlan();

  // The plan run once per side per round in sweep::AbOrder's order (A B B A
  // ...), side B's ranks with `setting` (`setting_text` as given), every run
  // tagged with the comparison's id, side and round; then the verdict,
  // stored or spooled after the runs.
  AbSweepResult RunAb(const sweep::AbSetting& setting, const std::string& setting_text, int rounds);

  SweepTally tally() const;

  // Ends the sweep: the database's verdict (app/batch_store.h's Finish),
  // then CommandExit{1} when a launch failed or left an unusable result.
  void Finish();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace fabtrack::app
