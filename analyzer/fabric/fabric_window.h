// Two scans of one subnet side by side (the cluster's previous stored scan
// and this one), each cable with both ends' ports in each: what the fabric
// detectors judge. Pure.
//
// The detectors are one file per family (error_counters, xmit_wait,
// link_state, link_rate, unanswered), each a function over this window,
// listed in fabric_judge.cc: they share the window and the way a finding
// names a cable, and nothing else (no InputIndex, no history), so the
// nightly DetectorRegistrar does not fit them.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/fabric_scan.h"
#include "core/finding.h"

namespace fabtrack::fabric_analysis {

struct FabricThresholds {
  // An error counter is flagged when it grew by at least this much on
  // either end of a cable in the window.
  uint64_t min_error_delta = 1;
  // PortXmitWait ticks per second on one end of a switch-to-switch cable.
  double xmit_wait_per_second = 1000;
};

struct LinkSides {
  const FabricPort* before = nullptr;  // in the previous scan
  const FabricPort* now = nullptr;     // in this scan
};

struct LinkWindow {
  FabricLink link;
  bool was_linked = false, is_linked = false;  // a cable in the previous / this scan
  LinkSides a, b;
  std::string tier;  // "switch-switch" (an uplink), "switch-ca", "other"
};

struct FabricWindow {
  const FabricScan* previous = nullptr;  // absent: a first scan, judged alone
  const FabricScan* current = nullptr;
  double seconds = 0;  // between the two scans' counter reads
  std::vector<LinkWindow> links;
};

FabricWindow MakeFabricWindow(const FabricScan* previous, const FabricScan& current);

// after - before; a counter that went backwards was reset and counts from
// zero. Absent when either side lacks it.
std::optional<uint64_t> CounterDelta(const LinkSides& side, const std::string& counter);

// The finding's common part: kind, severity, the cable as subject, both
// ends in the evidence.
Finding LinkFinding(const LinkWindow& w, const std::string& kind, Severity severity,
                    const std::string& message);

// The detector families (one .cc each).
void JudgeErrorCounters(const FabricWindow& w, const FabricThresholds& t,
                        std::vector<Finding>& out);
void JudgeXmitWait(const FabricWindow& w, const FabricThresholds& t, std::vector<Finding>& out);
void JudgeLinkState(const FabricWindow& w, const FabricThresholds& t, std::vector<Finding>& out);
void JudgeLinkRate(const FabricWindow& w, const FabricThresholds& t, std::vector<Finding>& out);
void JudgeUnanswered(const FabricWindow& w, const FabricThresholds& t, std::vector<Finding>& out);

// Every family over the window, in FindingBefore order.
std::vector<Finding> JudgeFabric(const FabricScan* previous, const FabricScan& current,
                                 const FabricThresholds& thresholds = {});

}  // namespace fabtrack::fabric_analysis
