// What a detector concludes. Plain data: the JSON output, the findings table
// and the reports are all views of this.
#pragma once

#include <optional>
#include <string>

#include "core/json_instances.h"

namespace fabtrack {

enum class Severity { kInfo = 0, kWarning = 1, kCritical = 2 };

const char* SeverityName(Severity severity);  // "info" | "warning" | "critical"
// As reports and monitoring plugins print it: "INFO" | "WARNING" | "CRITICAL".
const char* SeverityLabel(Severity severity);

struct Finding {
  std::string kind;  // detector name: "socket_fallback", "busbw_regression", ...
  Severity severity = Severity::kWarning;
  // What it is about; with cluster and kind it identifies the finding across
  // nights (one open finding per subject): "all_reduce/float/8 nodes x 8",
  // "node12:mlx5_3/1".
  std::string subject;
  std::optional<int64_t> run_id;
  std::optional<std::string> run_started_at;
  std::optional<int> nodes;
  std::optional<std::string> host, device;
  std::optional<int> port;
  std::optional<int64_t> size_bytes;
  std::optional<double> value, baseline;
  std::optional<std::string> unit;
  std::string message;
  nlohmann::json evidence = nlohmann::json::object();
};

// Stable order for output: severity (critical first), kind, subject.
bool FindingBefore(const Finding& a, const Finding& b);

// A stable short id of (cluster, kind, subject): the finding's identity in
// the Prometheus textfile and in alerts.
std::string FindingFingerprint(const std::string& cluster, const std::string& kind,
                               const std::string& subject);

}  // namespace fabtrack
