// Folds an analysis's findings into problems (core/problem.h). Pure.
#pragma once

#include <string>
#include <vector>

#include "core/analysis_result.h"
#include "core/problem.h"

namespace fabtrack::analyzer {

// One cause that shows as two findings of one run: `effect` is what `cause`
// leads to. A multi-node run without RDMA (rdma_absent: no HCA visible,
// libibverbs missing, the NET plugin failed) is also a run whose traffic went
// over sockets (socket_fallback): one thing to fix, not two. A CPU-driven run
// whose nodes were busy (cpu_bound) measured those CPUs: its regressions,
// scaling drop and jitter are the busy nodes', whatever series they are on,
// and no fabric fault: they do not raise the problem above the cause.
struct SharedCause {
  std::string cause, effect;
  // The effect must be on the cause's subject; false: any of its run.
  bool same_subject = true;
  // The effect's severity counts toward the problem's; false: it is capped
  // at the cause's (the finding keeps its own in "severity_before_cause").
  bool effect_severity_counts = true;
};
const std::vector<SharedCause>& SharedCauses();

// Links the findings of one run (and subject, where the link says so) that
// share a cause: the effect's evidence gets "explained_by" (the cause's
// kind), the cause's "explains" (the effects' kinds); an effect whose
// severity the cause caps is lowered to the cause's. An effect that is an
// info note beside an info cause (a cluster that declares sockets) is folded
// into the cause's evidence ("explains_notes": its message and evidence) and
// removed: one note per cause. Analyze calls it after the detectors.
void LinkSharedCauses(std::vector<Finding>* findings);

// One problem per (kind, subject) of the warning and critical findings of
// `result` (info findings are notes, not problems), ordered like findings
// (open ones by severity first, recovered and acknowledged after). `acks` that
// have not expired by `now_iso` acknowledge their problem. The newest night
// judged (result.newest_judged_at) tells new/ongoing from recovered. `history`
// (the stored open findings of the cluster, read before tonight's are
// stored) carries a problem back past the window: first seen on its stored
// first night, its nights counted with the stored ones, ongoing when that
// first night is before tonight, whatever window was judged. A finding that
// a warning or critical finding of the same run and subject explains
// (SharedCauses) is folded into that cause's problem (Problem::related),
// not one of its own.
std::vector<Problem> FoldProblems(const AnalysisResult& result, const std::vector<ProblemAck>& acks,
                                  const std::string& now_iso,
                                  const std::vector<ProblemHistory>& history = {});

// One line saying whether tonight is good: "OK", or "CRITICAL: <the top open
// problem>" / "WARNING: ...", with how many more.
std::string VerdictLine(const std::vector<Problem>& problems);

}  // namespace fabtrack::analyzer
