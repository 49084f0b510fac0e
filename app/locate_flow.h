// `fabtrack locate`'s flow (issue 20): plan a round (analyzer/locate), run
// its pairs at once with fabtrack-pairprobe through the launcher, judge all
// probes so far, and stop when the verdict is settled, the planner has
// nothing left to ask, or the round budget is spent.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/sweep/sweep_plan.h"
#include "core/locate.h"

namespace fabtrack::app {

struct LocateRequest {
  std::vector<std::string> hosts;        // distinct, in order
  std::optional<LocateTopology> fabric;  // the topology file's, when given
  sweep::SweepSpec launch;               // launcher, mpirun, custom_prefix, as_root
  std::string probe_program;             // fabtrack-pairprobe
  std::vector<std::string> probe_args;   // passed through (-b, -n, --reps, --latency-iters)
  std::string work_dir;                  // result files (shared with the first rank's node)
  int max_rounds = 0;                    // 0: 2*ceil(log2 N)+2
};

struct LocateReport {
  LocateTopology topology;            // the hosts, placed on the fabric's leaves where known
  std::vector<std::string> unplaced;  // hosts the topology file does not list
  std::vector<LocateProbe> probes;
  LocateVerdict verdict;
  double seconds = 0;
};

// The hosts on the fabric: each host's leaf (matched by name or first
// label) and those leaves' spines. Pure.
LocateTopology PlaceHosts(const std::vector<std::string>& hosts,
                          const std::optional<LocateTopology>& fabric,
                          std::vector<std::string>* unplaced);

// Runs the rounds, logging each to `log`. Throws CommandExit{3} when a
// round cannot be run or read (locate's "could not run").
LocateReport RunLocateFlow(const LocateRequest& request, std::ostream& log);

// analyze's codes: 0 no suspect, 1 a suspect (not settled, or weak),
// 2 a settled verdict whose first suspect is strong (score >= 6: one and a
// half times the grading's threshold of slow).
int LocateExitCode(const LocateVerdict& verdict);

}  // namespace fabtrack::app
