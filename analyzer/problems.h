// Folds an analysis's findings into problems (core/problem.h). Pure.
#pragma once

#include <string>
#include <vector>

#include "core/analysis_result.h"
#include "core/problem.h"

namespace fabtrack::analyzer {

// One problem per (kind, subject) of the warning and critical findings of
// `result` (info findings are notes, not problems), ordered like findings
// (open ones by severity first, recovered and acknowledged after). `acks` that
// have not expired by `now_iso` acknowledge their problem. The newest night
// judged (result.newest_judged_at) tells new/ongoing from recovered. `history`
// (the stored open findings of the cluster, read before tonight's are
// stored) carries a problem back past the window: first seen on its stored
// first night, its nights counted with the stored ones, ongoing when that
// first night is before tonight, whatever window was judged.
std::vector<Problem> FoldProblems(const AnalysisResult& result, const std::vector<ProblemAck>& acks,
                                  const std::string& now_iso,
                                  const std::vector<ProblemHistory>& history = {});

// One line saying whether tonight is good: "OK", or "CRITICAL: <the top open
// problem>" / "WARNING: ...", with how many more.
std::string VerdictLine(const std::vector<Problem>& problems);

}  // namespace fabtrack::analyzer
