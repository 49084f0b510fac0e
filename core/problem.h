// A problem: the findings of one kind on one subject (series, host, port)
// over the nights analysed, folded into one thing to fix. What `analyze`,
// the reports, the metrics and the alerts show; the findings stay the
// evidence. Plain data.
#pragma once

#include <optional>
#include <string>

#include "core/finding.h"

namespace fabtrack {

enum class ProblemState {
  kNew,           // first seen on the newest night judged
  kOngoing,       // seen on the newest night judged, and before it
  kRecovered,     // not seen on the newest night judged
  kAcknowledged,  // silenced by `fabtrack ack` until a date
};

const char* ProblemStateName(ProblemState state);  // "new", "ongoing", ...

// A silence from `fabtrack ack`: the problem `id` (its fingerprint) until
// `until` (ISO 8601), with why.
struct ProblemAck {
  std::string id;
  std::string until;
  std::string note;
};

struct Problem {
  std::string id;  // FindingFingerprint(cluster, kind, subject): stable across nights
  std::string kind, subject;
  Severity severity = Severity::kWarning;  // the worst of its findings
  ProblemState state = ProblemState::kNew;
  std::string first_seen, last_seen;  // ISO 8601, run times
  int nights = 0;                     // nights with a finding of it
  int findings = 0;                   // findings folded into it
  Finding worst;                      // the most severe, then the largest deviation
  Finding latest;                     // the newest (its message describes it now)
  std::optional<ProblemAck> ack;      // when acknowledged
};

}  // namespace fabtrack
