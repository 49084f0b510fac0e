// Stores an analysis: findings deduplicated by (cluster, kind, subject) — one
// open finding per subject, later nights refresh it — resolved when the
// condition clears, plus one `analyses` row. One transaction: a failure
// leaves the findings as they were.
#pragma once

#include <pqxx/connection>
#include <string>

#include "analyzer/analyze.h"
#include "analyzer/model.h"

namespace fabtrack::store {

struct StoredFindings {
  int opened = 0;     // new open findings
  int refreshed = 0;  // open findings seen again
  int resolved = 0;   // open findings whose condition cleared
  int64_t analysis_id = 0;
};

// A stable short id of (cluster, kind, subject): the finding's identity in
// the Prometheus textfile and in alerts.
std::string FindingFingerprint(const std::string& cluster, const std::string& kind,
                               const std::string& subject);

StoredFindings StoreAnalysis(pqxx::connection_base& connection,
                             const analyzer::AnalysisInput& input,
                             const analyzer::AnalysisResult& result);

}  // namespace fabtrack::store
