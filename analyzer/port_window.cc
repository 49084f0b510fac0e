#include "analyzer/port_window.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

#include "analyzer/run_facts.h"
#include "core/statistics.h"

namespace fabtrack::analyzer {

std::map<PortKey, std::map<std::string, const PortDeltaView*>> DeltasByPort(const InputIndex& input,
                                                                            int64_t run_id) {
  std::map<PortKey, std::map<std::string, const PortDeltaView*>> out;
  for (const PortDeltaView& d : input.PortDeltas(run_id)) {
    out[{d.host, d.device, d.port}][d.counter] = &d;
  }
  return out;
}

Finding PortFinding(const RunView& run, const PortKey& port, Severity severity) {
  Finding f = FindingForRun(run, port.Subject(), severity);
  f.host = port.host;
  f.device = port.device;
  f.port = port.port;
  return f;
}

namespace {

// The type under which the index keeps the windows (InputIndex::Derived).
struct JudgedWindows {
  std::vector<PortWindow> windows;
};

std::vector<PortWindow> BuildJudgedPortWindows(const InputIndex& input) {
  std::vector<PortWindow> out;
  for (const RunView* run : input.judged()) {
    for (auto& [port, counters] : DeltasByPort(input, run->id)) {
      out.push_back({port, run, run->started_at_iso, "", std::move(counters)});
    }
  }
  // snapshot_deltas come by port and window end: one window per change of either.
  for (const SnapshotDeltaView& s : input.input().snapshot_deltas) {
    const PortKey port{s.delta.host, s.delta.device, s.delta.port};
    if (out.empty() || out.back().run != nullptr || out.back().port != port ||
        out.back().end_iso != s.window_end_iso) {
      out.push_back({port, nullptr, s.window_start_iso, s.window_end_iso, {}});
    }
    out.back().counters[s.delta.counter] = &s.delta;
  }
  return out;
}

}  // namespace

const std::vector<PortWindow>& JudgedPortWindows(const InputIndex& input) {
  return input.Derived<JudgedWindows>([&] { return JudgedWindows{BuildJudgedPortWindows(input)}; })
      .windows;
}

Finding PortFinding(const PortWindow& window, Severity severity) {
  if (window.run != nullptr) return PortFinding(*window.run, window.port, severity);
  Finding f;
  f.severity = severity;
  f.subject = window.port.Subject();
  f.run_started_at = window.end_iso;
  f.host = window.port.host;
  f.device = window.port.device;
  f.port = window.port.port;
  return f;
}

void JoinWithWindow(const InputIndex& input, const PortWindow& window, Finding* f) {
  if (window.run != nullptr) {
    JoinWithRun(input, *window.run, f);
    return;
  }
  f->message += " between snapshots " + window.start_iso + " and " + window.end_iso;
  f->evidence["window"] = {{"start", window.start_iso}, {"end", window.end_iso}};
}

namespace {

std::optional<double> LargeBand(const InputIndex& input, const RunView& run) {
  auto results = input.Results(run.id);
  if (results.empty()) return std::nullopt;
  const int64_t largest = results.back().size_bytes;
  return BandMedian(results, std::min<int64_t>(int64_t{64} << 20, largest), INT64_MAX,
                    &ResultPoint::busbw_gbps);
}

}  // namespace

std::optional<double> BusbwVersusHistory(const InputIndex& input, const RunView& run) {
  auto it = input.series().find(SeriesName(run));
  if (it == input.series().end()) return std::nullopt;
  // The most recent two weeks of the series are its baseline: the newest 14
  // earlier runs with a number (at least 3), found from the newest back, so
  // that a summarised history (schema 015) is read no further than needed.
  const std::vector<const RunView*>& runs = it->second;
  auto end = std::lower_bound(runs.begin(), runs.end(), run.started_at,
                              [](const RunView* r, double t) { return r->started_at < t; });
  std::vector<double> history;
  const std::string key = SummaryKey("port_window.large_band", "");
  for (auto earlier = end; earlier != runs.begin() && history.size() < 14;) {
    --earlier;
    const std::vector<double> v = input.Summary(**earlier, key, [&] {
      return std::vector<double>{
          LargeBand(input, **earlier).value_or(std::numeric_limits<double>::quiet_NaN())};
    });
    if (!v.empty() && std::isfinite(v[0])) history.push_back(v[0]);
  }
  if (history.size() < 3) return std::nullopt;
  auto tonight = LargeBand(input, run);
  auto baseline = stats::Median(history);
  if (!tonight || !baseline || *baseline <= 0) return std::nullopt;
  return *tonight / *baseline;
}

void JoinWithRun(const InputIndex& input, const RunView& run, Finding* f) {
  char text[160];
  std::snprintf(text, sizeof text, " during run %lld (%s, %d node%s, %s)",
                static_cast<long long>(run.id), run.collective.value_or("?").c_str(),
                run.nodes.value_or(0), run.nodes == 1 ? "" : "s", run.started_at_iso.c_str());
  f->message += text;
  f->evidence["run"] = {{"id", run.id}, {"series", SeriesName(run)}};
  if (auto ratio = BusbwVersusHistory(input, run)) {
    f->evidence["run"]["busbw_vs_baseline"] = *ratio;
    if (*ratio < 0.95) {
      std::snprintf(text, sizeof text, "; that run's busbw was %.0f%% below its baseline",
                    (1 - *ratio) * 100);
      f->message += text;
    }
  }
}

}  // namespace fabtrack::analyzer
