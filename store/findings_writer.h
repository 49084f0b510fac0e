// Stores an analysis: findings deduplicated by (cluster, kind, subject) — one
// open finding per subject, later nights refresh it — resolved when the
// condition clears, plus one `analyses` row. One transaction: a failure
// leaves the findings as they were.
#pragma once

#include <pqxx/connection>
#include <string>
#include <vector>

#include "core/analysis_input.h"
#include "core/analysis_result.h"
#include "core/problem.h"

namespace fabtrack::store {

struct StoredFindings {
  int opened = 0;     // new open findings
  int refreshed = 0;  // open findings seen again
  int resolved = 0;   // open findings whose condition cleared
  int64_t analysis_id = 0;
};

// The open findings of `cluster` as earlier analyses left them: the stored
// history the problems' state is told from (read before StoreAnalysis).
std::vector<ProblemHistory> OpenFindingHistory(pqxx::connection_base& connection,
                                               const std::string& cluster);

StoredFindings StoreAnalysis(pqxx::connection_base& connection, const AnalysisInput& input,
                             const AnalysisResult& result);

}  // namespace fabtrack::store
