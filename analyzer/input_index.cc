#include "analyzer/input_index.h"

#include <algorithm>
#include <cmath>

#include "core/content_hash.h"

namespace fabtrack::analyzer {
namespace {

template <typename T, typename RunIdOf, typename Less>
void Group(std::vector<T>* sorted, std::unordered_map<int64_t, std::span<const T>>* by_run,
           RunIdOf run_id_of, Less less) {
  auto before = [&](const T& a, const T& b) {
    if (run_id_of(a) != run_id_of(b)) return run_id_of(a) < run_id_of(b);
    return less(a, b);
  };
  // The reader's rows mostly arrive in this order already (results in the
  // order they were written): moving ~10^6 of them again is most of the cost.
  if (!std::is_sorted(sorted->begin(), sorted->end(), before)) {
    std::stable_sort(sorted->begin(), sorted->end(), before);
  }
  size_t begin = 0;
  for (size_t i = 1; i <= sorted->size(); ++i) {
    if (i == sorted->size() || run_id_of((*sorted)[i]) != run_id_of((*sorted)[begin])) {
      (*by_run)[run_id_of((*sorted)[begin])] =
          std::span<const T>(sorted->data() + begin, i - begin);
      begin = i;
    }
  }
}

template <typename T>
std::span<const T> Lookup(const std::unordered_map<int64_t, std::span<const T>>& map, int64_t id) {
  auto it = map.find(id);
  return it == map.end() ? std::span<const T>() : it->second;
}

std::string Opt(const std::optional<std::string>& s) { return s.value_or("?"); }

}  // namespace

std::string ScalingFamilyName(const RunView& run) {
  std::string name = Opt(run.collective) + "/" + Opt(run.dtype) + "/";
  name += run.ranks_per_node ? std::to_string(*run.ranks_per_node) + " per node" : "? per node";
  name += "/" + run.source;
  if (run.backend) name += ":" + *run.backend;
  return name;
}

std::string SeriesName(const RunView& run) {
  std::string name = Opt(run.collective) + "/" + Opt(run.dtype) + "/";
  name += run.nodes ? std::to_string(*run.nodes) : "?";
  name += run.nodes == 1 ? " node x " : " nodes x ";
  name += run.ranks_per_node ? std::to_string(*run.ranks_per_node) : "?";
  name += "/" + run.source;
  if (run.backend) name += ":" + *run.backend;
  return name;
}

InputIndex::InputIndex(AnalysisInput input) : input_(std::move(input)) {
  run_by_id_.reserve(input_.runs.size());
  for (const RunView& run : input_.runs) {
    run_by_id_[run.id] = &run;
    summarized_ = summarized_ || run.summarized;
    if (input_.Judged(run)) judged_.push_back(&run);
    if (run.status != "failed") series_[SeriesName(run)].push_back(&run);
  }
  auto by_time = [](const RunView* a, const RunView* b) {
    return a->started_at != b->started_at ? a->started_at < b->started_at : a->id < b->id;
  };
  std::stable_sort(judged_.begin(), judged_.end(), by_time);
  for (auto& [name, runs] : series_) std::stable_sort(runs.begin(), runs.end(), by_time);

  Group(
      &input_.results, &results_by_run_, [](const auto& r) { return r.run_id; },
      [](const ResultPoint& a, const ResultPoint& b) { return a.size_bytes < b.size_bytes; });
  Group(
      &input_.channels, &channels_by_run_, [](const auto& c) { return c.run_id; },
      [](const ChannelUse& a, const ChannelUse& b) { return a.rank < b.rank; });
  Group(
      &input_.net_devices, &net_devices_by_run_, [](const auto& d) { return d.run_id; },
      [](const NetDeviceView& a, const NetDeviceView& b) {
        return std::tie(a.host, a.nic_index) < std::tie(b.host, b.nic_index);
      });
  Group(
      &input_.port_deltas, &port_deltas_by_run_, [](const auto& d) { return d.run_id; },
      [](const PortDeltaView& a, const PortDeltaView& b) {
        return std::tie(a.host, a.device, a.port) < std::tie(b.host, b.device, b.port);
      });
  Group(
      &input_.log_events, &log_events_by_run_, [](const auto& e) { return e.run_id; },
      [](const LogEventView& a, const LogEventView& b) {
        return a.line.value_or(0) < b.line.value_or(0);
      });
  for (const PortStateView& s : input_.port_states) {
    if (s.run_id) port_states_.push_back(s);
  }
  Group(
      &port_states_, &port_states_by_run_, [](const auto& s) { return s.run_id.value_or(0); },
      [](const PortStateView& a, const PortStateView& b) {
        return std::tie(a.host, a.device, a.port) < std::tie(b.host, b.device, b.port);
      });
  for (const StepView& s : input_.steps) step_by_run_[s.run_id] = &s;
}

const RunView* InputIndex::Run(int64_t id) const {
  auto it = run_by_id_.find(id);
  return it == run_by_id_.end() ? nullptr : it->second;
}
const StepView* InputIndex::Step(int64_t id) const {
  auto it = step_by_run_.find(id);
  return it == step_by_run_.end() ? nullptr : it->second;
}

std::span<const ResultPoint> InputIndex::Results(int64_t id) const {
  if (const RunView* run = Run(id); run && !run->results_loaded) {
    throw SummaryMiss("run " + std::to_string(id) + "'s results are summarised");
  }
  return Lookup(results_by_run_, id);
}

std::string SummaryKey(const std::string& name, const std::string& settings) {
  // The summaries' own format; bump it when what a figure means changes.
  // v2: the series verdicts' z accounts for the baseline median's and the
  // noise estimate's errors (stats/baseline_z.h).
  return name + "/" + Sha256Hex("v2\n" + settings).substr(0, 12);
}

const std::vector<double>* InputIndex::StoredSummary(const RunView& run,
                                                     const std::string& key) const {
  if (!run.summarized) return nullptr;
  auto it = input_.summaries.find(run.id);
  if (it == input_.summaries.end()) return nullptr;
  auto at = it->second.find(key);
  return at == it->second.end() ? nullptr : &at->second;
}

void InputIndex::Produce(const RunView& run, const std::string& key,
                         std::vector<double> numbers) const {
  if (keep_summaries_) produced_[run.id][key] = std::move(numbers);
}

std::vector<double> InputIndex::Summary(const RunView& run, const std::string& key,
                                        const std::function<std::vector<double>()>& compute) const {
  if (const std::vector<double>* stored = StoredSummary(run, key)) return *stored;
  if (!run.results_loaded) {
    throw SummaryMiss("run " + std::to_string(run.id) + " has no stored " + key);
  }
  std::vector<double> numbers = compute();
  Produce(run, key, numbers);
  return numbers;
}

std::span<const ChannelUse> InputIndex::Channels(int64_t id) const {
  return Lookup(channels_by_run_, id);
}
std::span<const LogEventView> InputIndex::LogEvents(int64_t id) const {
  return Lookup(log_events_by_run_, id);
}
std::span<const NetDeviceView> InputIndex::NetDevices(int64_t id) const {
  return Lookup(net_devices_by_run_, id);
}
std::span<const PortDeltaView> InputIndex::PortDeltas(int64_t id) const {
  return Lookup(port_deltas_by_run_, id);
}
std::span<const PortStateView> InputIndex::PortStates(int64_t id) const {
  return Lookup(port_states_by_run_, id);
}

}  // namespace fabtrack::analyzer
