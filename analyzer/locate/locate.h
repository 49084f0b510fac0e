// Locating a slow node or uplink in few rounds of short tests (issue 20):
// the planner says which disjoint probes to run next, the verdict says what
// the probes so far convict. Both are pure, so the same code runs against a
// real fabric (app/) and a simulated one of 4096 nodes (tests, bench).
//
// The model: a fault slows exactly the probes whose path it lies on. A node
// (its NIC, cable, or CPU) lies on every probe it is a member of; a leaf's
// uplink on every probe with members on both sides of it. A probe is slow
// when its bandwidth or small-message latency is far (robust z) from the
// healthy reference. A hypothesis is consistent when every probe on its path
// is slow; it explains the measurements when it also covers every slow
// probe. One consistent explanation left: settled. Several: the planner
// pairs each candidate with a node already proved healthy (in its own leaf,
// so that uplinks do not confound), which halves nothing but separates
// everything at once, so single faults settle in two rounds.
#pragma once

#include <string>
#include <vector>

#include "core/locate.h"

namespace fabtrack::analyzer {

// The probes of one round: disjoint sets of node indices, run at once.
struct LocateRound {
  std::vector<std::vector<int>> probes;
};

LocateVerdict JudgeLocate(const LocateTopology& topology, const std::vector<LocateProbe>& probes);

// The next round given the probes so far and their verdict; no probes when
// there is nothing left to learn (settled, or no candidate can be separated).
LocateRound PlanLocateRound(const LocateTopology& topology, const std::vector<LocateProbe>& probes,
                            const LocateVerdict& verdict);

// A suspect in plain words: "node node7 is slow", "the uplink leaf2-spine is
// slow", "the link node3->node9 is slow".
std::string DescribeSuspect(const LocateSuspect& suspect);

// A verdict in one sentence for people: its suspects in rank order, or "no
// fault found" with the healthy spread; "not settled" and a spent budget
// said.
std::string DescribeLocateVerdict(const LocateVerdict& verdict, bool budget_spent);

}  // namespace fabtrack::analyzer
