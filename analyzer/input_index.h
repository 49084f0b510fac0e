// Lookups over an AnalysisInput that every detector needs: results, channels
// and port data by run, runs grouped into series and nights. Built once per
// analysis; owns the input (moved in, or copied), sorted in place.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <typeindex>
#include <unordered_map>
#include <vector>

#include "core/analysis_input.h"
#include "core/clock.h"

namespace fabtrack::analyzer {

// The identity of a benchmark series: what must be equal for two runs' numbers
// to be comparable across nights. "all_reduce/float/4 nodes x 8/nccl-tests".
std::string SeriesName(const RunView& run);
// The same without the node count: one night's scaling curve is the runs of
// one sweep that share it.
std::string ScalingFamilyName(const RunView& run);

// A detector asked for a history run's results (or a stored figure) that
// the summarised history does not hold: the caller analyses again with the
// full history (app: `fabtrack analyze`). Never seen with a full input.
class SummaryMiss : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The key of a stored figure: `name` (the detector and what it keeps) and a
// short hash of `settings`, the text of every setting the figure depends on,
// so that a settings change reads no stale figure.
std::string SummaryKey(const std::string& name, const std::string& settings);

// Per run, the figures detectors derived from it (Summary()), by key.
using RunSummaries = RunFigures;

class InputIndex {
 public:
  explicit InputIndex(AnalysisInput input);
  InputIndex(const InputIndex&) = delete;
  InputIndex& operator=(const InputIndex&) = delete;

  const AnalysisInput& input() const { return input_; }
  const ClusterInfo& cluster() const { return input_.cluster; }
  const std::vector<RunView>& runs() const { return input_.runs; }
  // Runs judged by this analysis, oldest first.
  const std::vector<const RunView*>& judged() const { return judged_; }
  bool Judged(const RunView& run) const { return input_.Judged(run); }
  const RunView* Run(int64_t id) const;

  // Sorted by size (then input order). Throws SummaryMiss for a run whose
  // rows the reader left out (RunView::results_loaded).
  std::span<const ResultPoint> Results(int64_t run_id) const;
  bool HasResults(const RunView& run) const { return run.results_loaded; }

  // A figure a detector keeps of a history run, under `key` (which names the
  // detector and a hash of the settings it depends on): the stored one when
  // the run is summarised and has it, else `compute()` over the run's rows
  // (recorded in produced(), which `fabtrack analyze` stores); SummaryMiss
  // when neither. NaN stands for "no number".
  std::vector<double> Summary(const RunView& run, const std::string& key,
                              const std::function<std::vector<double>()>& compute) const;
  // The stored figure only (nullptr when absent or the run is not summarised).
  const std::vector<double>* StoredSummary(const RunView& run, const std::string& key) const;
  // Records a figure computed by the caller (Summary() does it itself), when
  // the figures are kept (KeepSummaries: an analysis that stores them).
  void Produce(const RunView& run, const std::string& key, std::vector<double> numbers) const;
  bool keeps_summaries() const { return keep_summaries_; }
  void KeepSummaries(bool keep) { keep_summaries_ = keep; }
  // Whether any run is summarised (the analysis runs on stored summaries).
  bool summarized() const { return summarized_; }
  const RunSummaries& produced() const { return produced_; }
  std::span<const ChannelUse> Channels(int64_t run_id) const;
  std::span<const NetDeviceView> NetDevices(int64_t run_id) const;
  // In line order.
  std::span<const LogEventView> LogEvents(int64_t run_id) const;
  std::span<const PortDeltaView> PortDeltas(int64_t run_id) const;
  std::span<const PortStateView> PortStates(int64_t run_id) const;
  // The run's step-mode summary; nullptr when it has none.
  const StepView* Step(int64_t run_id) const;

  // Runs per SeriesName, oldest first (completed and partial runs; failed
  // runs carry no usable numbers).
  const std::map<std::string, std::vector<const RunView*>>& series() const { return series_; }

  // A structure derived from the input that several detectors read (the
  // judged port windows: congestion and port_errors), built by `build()` on
  // the first call and kept for the analysis, one per type T. Detectors run
  // one after another on one thread; the index outlives them.
  template <typename T, typename Build>
  const T& Derived(Build build) const {
    std::shared_ptr<void>& slot = derived_[std::type_index(typeid(T))];
    if (!slot) slot = std::make_shared<T>(build());
    return *static_cast<const T*>(slot.get());
  }

 private:
  template <typename T>
  using ByRun = std::unordered_map<int64_t, std::span<const T>>;

  AnalysisInput input_;
  std::vector<const RunView*> judged_;
  std::unordered_map<int64_t, const RunView*> run_by_id_;
  std::vector<PortStateView> port_states_;  // those tied to a run
  ByRun<ResultPoint> results_by_run_;
  ByRun<ChannelUse> channels_by_run_;
  ByRun<NetDeviceView> net_devices_by_run_;
  ByRun<LogEventView> log_events_by_run_;
  ByRun<PortDeltaView> port_deltas_by_run_;
  ByRun<PortStateView> port_states_by_run_;
  std::map<std::string, std::vector<const RunView*>> series_;
  std::unordered_map<int64_t, const StepView*> step_by_run_;
  bool summarized_ = false;
  bool keep_summaries_ = true;
  mutable RunSummaries produced_;
  mutable std::unordered_map<std::type_index, std::shared_ptr<void>> derived_;
};

}  // namespace fabtrack::analyzer
