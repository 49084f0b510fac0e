#include "core/analysis_result.h"

namespace fabtrack {

int ExitStatusOf(const AnalysisResult& result) {
  int status = 0;
  for (const Finding& f : result.findings) {
    if (f.severity == Severity::kCritical) return 2;
    if (f.severity == Severity::kWarning) status = 1;
  }
  return status;
}

}  // namespace fabtrack
