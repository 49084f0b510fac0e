#include "core/finding.h"

#include <tuple>

#include "core/content_hash.h"

namespace fabtrack {

const char* SeverityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "info";
    case Severity::kWarning:
      return "warning";
    case Severity::kCritical:
      return "critical";
  }
  return "info";
}

const char* SeverityLabel(Severity severity) {
  switch (severity) {
    case Severity::kInfo:
      return "INFO";
    case Severity::kWarning:
      return "WARNING";
    case Severity::kCritical:
      return "CRITICAL";
  }
  return "INFO";
}

bool FindingBefore(const Finding& a, const Finding& b) {
  return std::forward_as_tuple(static_cast<int>(b.severity), a.kind, a.subject, a.run_started_at) <
         std::forward_as_tuple(static_cast<int>(a.severity), b.kind, b.subject, b.run_started_at);
}

std::string FindingFingerprint(const std::string& cluster, const std::string& kind,
                               const std::string& subject) {
  return Sha256Hex(cluster + '\x1f' + kind + '\x1f' + subject).substr(0, 16);
}

}  // namespace fabtrack
