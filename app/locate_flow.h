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
#include "core/database_choice.h"
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
  // Wall-clock budget in seconds (0: none): no round starts that the
  // previous one says would not fit, and a round still running when it is
  // spent is stopped (`timeout`); the verdict is then what the rounds before
  // it showed.
  double budget_s = 0;
};

struct LocateReport {
  LocateTopology topology;            // the hosts, placed on the fabric's leaves where known
  std::vector<std::string> unplaced;  // hosts the topology file does not list
  std::vector<LocateProbe> probes;
  LocateVerdict verdict;
  double seconds = 0;
  bool budget_spent = false;  // stopped by the budget before the verdict settled
};

// The hosts on the fabric: each host's leaf (matched by name or first
// label) and those leaves' spines. Pure.
LocateTopology PlaceHosts(const std::vector<std::string>& hosts,
                          const std::optional<LocateTopology>& fabric,
                          std::vector<std::string>* unplaced);

// Runs the rounds, logging each to `log`. Throws CommandExit{3} when a
// round cannot be run or read (locate's "could not run").
LocateReport RunLocateFlow(const LocateRequest& request, std::ostream& log);

// analyze's codes: 0 no suspect and settled (every probe within the healthy
// spread), 1 a suspect (not settled, or weak) or no suspect but not settled
// (something slow not yet explained or cleared when the rounds ran out),
// 2 a settled verdict whose first suspect is strong (score >= 6: one and a
// half times the grading's threshold of slow).
int LocateExitCode(const LocateVerdict& verdict);

// The finding kinds that make the nightly job locate (`locate --flagged-since`):
// the sweep slowed as a whole or one rank held the others back.
const std::vector<std::string>& DefaultLocateTriggers();

// The runs of `cluster` since `since` that an open finding of one of `kinds`
// flags, oldest first. Throws CommandExit{3} when the database cannot be read.
std::vector<int64_t> FlaggedRuns(const DatabaseChoice& choice, const std::string& cluster,
                                 const std::string& since, const std::vector<std::string>& kinds,
                                 std::ostream& err);

struct LocateStored {
  bool stored = false;  // false: spooled, stored when the database is back
  int64_t verdict_id = 0;
};

// Stores a verdict (store/locate_store.h) in its database in one
// transaction, or spools it when the database is away (app/batch_store.h):
// a verdict measured is never lost. Throws CommandExit{3} when the database
// refuses it or even the spool cannot take it.
LocateStored StoreLocateVerdict(const DatabaseChoice& choice, const LocateRecord& record,
                                std::ostream& err);

}  // namespace fabtrack::app
