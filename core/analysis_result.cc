#include "core/analysis_result.h"

namespace fabtrack {

int ExitStatusOf(const AnalysisResult& result) {
  int status = 0;
  for (const Finding& f : result.findings) {
    // `fabtrack ack` silences its problem's findings.
    bool silenced = false;
    for (const Problem& p : result.problems) {
      silenced |=
          p.state == ProblemState::kAcknowledged && p.kind == f.kind && p.subject == f.subject;
    }
    if (silenced) continue;
    if (f.severity == Severity::kCritical) return 2;
    if (f.severity == Severity::kWarning) status = 1;
  }
  return status;
}

}  // namespace fabtrack
