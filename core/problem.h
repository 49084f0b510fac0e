// A problem: the findings of one kind on one subject (series, host, port)
// over the nights analysed, folded into one thing to fix. What `analyze`,
// the reports, the metrics and the alerts show; the findings stay the
// evidence. Plain data.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/finding.h"

namespace fabtrack {

enum class ProblemState {
  kNew,           // first seen on the newest night judged
  kOngoing,       // seen on the newest night judged, and before it (in the window or stored)
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

// What the database remembers of a problem from earlier analyses: its open
// finding (store/findings_writer keeps one per cluster, kind and subject,
// refreshed every night it is seen until it clears). The truth a problem's
// state is told from, whatever window tonight's analysis judged.
struct ProblemHistory {
  std::string kind, subject;
  std::string first_seen, last_seen;  // ISO 8601, run times
  int nights = 0;                     // nights with a finding of it, 0 when not counted
};

// The nights a problem was seen: the stored count plus the `window_nights`
// (NightOf numbers) it does not cover, those before its first or after its
// last stored night (a re-analysis of stored nights adds nothing). A stored
// row that never counted nights stands for its first and last night. Pure;
// the findings writer and the problem fold share it.
int NightsWithHistory(const ProblemHistory& stored, const std::set<int64_t>& window_nights);

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
  // Findings of other kinds on the same runs that this problem's cause
  // explains (analyzer/problems.h SharedCauses: rdma_absent's
  // socket_fallback), folded in rather than problems of their own: the
  // newest of each kind.
  std::vector<Finding> related;
  std::optional<ProblemAck> ack;  // when acknowledged
};

}  // namespace fabtrack
