// Lookups over an AnalysisInput that every detector needs: results, channels
// and port data by run, runs grouped into series and nights. Built once per
// analysis; owns the input (moved in, or copied), sorted in place.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
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

  // Sorted by size (then input order).
  std::span<const ResultPoint> Results(int64_t run_id) const;
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
};

}  // namespace fabtrack::analyzer
