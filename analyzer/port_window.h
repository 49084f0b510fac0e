// What the port detectors share: a judged run's per-port counter deltas
// grouped by port, the finding skeleton for a port, and how the run whose
// window it was fared (so that a port finding says whether the numbers moved).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "analyzer/input_index.h"
#include "core/finding.h"

namespace fabtrack::analyzer {

struct PortKey {
  std::string host, device;
  int port = 0;
  friend auto operator<=>(const PortKey&, const PortKey&) = default;
  std::string Subject() const { return host + ":" + device + "/" + std::to_string(port); }
};

// counter name -> delta view, per port, for one run.
std::map<PortKey, std::map<std::string, const PortDeltaView*>> DeltasByPort(const InputIndex& input,
                                                                            int64_t run_id);

// A finding about one port in the window of `run`.
Finding PortFinding(const RunView& run, const PortKey& port, Severity severity);

// One window of one port's counters that the delta detectors judge: a judged
// run's (a sweep's bracket), or the span between two stored snapshots of the
// port that no run brackets (imported dumps, `counters snapshot --store`)
// ending in the judged span.
struct PortWindow {
  PortKey port;
  const RunView* run = nullptr;  // nullptr: a snapshot window
  std::string start_iso, end_iso;
  std::map<std::string, const PortDeltaView*> counters;  // by counter name
};

// The judged runs' port windows (oldest run first, by port), then the
// snapshot windows (by port, then time). Built once per analysis and kept in
// the index (a 4096-node night: 32,768 windows, read by congestion and by
// port_errors).
const std::vector<PortWindow>& JudgedPortWindows(const InputIndex& input);

// A finding about the window's port, of its run or, for a snapshot window,
// seen when the window ended (run_started_at holds that time: problems fold
// by it into nights).
Finding PortFinding(const PortWindow& window, Severity severity);

// Appends what the window was to the finding's message and evidence: the run
// (JoinWithRun), or " between snapshots START and END" of a snapshot window.
void JoinWithWindow(const InputIndex& input, const PortWindow& window, Finding* finding);

// The run's large-message busbw against the median of its series' earlier
// runs, as a ratio (0.86 = 14% below); nullopt without enough history.
std::optional<double> BusbwVersusHistory(const InputIndex& input, const RunView& run);

// " during run 123 (all_reduce, 16 nodes, 2026-11-30T02:10:00Z)[; that run's
// busbw was 14% below its baseline]" and the same as evidence.
void JoinWithRun(const InputIndex& input, const RunView& run, Finding* finding);

}  // namespace fabtrack::analyzer
