#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabtrack {

// The current time as ISO 8601 UTC with microseconds ("2026-12-01T02:00:00.123456Z"):
// how every timestamp fabtrack records is written.
std::string UtcNowIso();

// Seconds since the epoch of an RFC 3339 timestamp ("2026-12-01T02:00:00Z",
// with an optional fraction and a Z or +HH:MM offset). nullopt if malformed.
std::optional<double> ParseIsoSeconds(std::string_view text);
// `seconds` since the epoch as UtcNowIso writes times.
std::string IsoFromSeconds(double seconds);

// Nightly jobs start in the evening and run past midnight: a night is the 24 h
// from 12:00 UTC, numbered by its first day since the epoch.
int64_t NightOf(double started_at);

// A run's times as the launching host saw them, when the clock of the node
// that ran rank 0 disagrees: the launcher knows when it started and when it
// got the run back (its own clock), the run says when it started and ended
// (rank 0's). Within `tolerance_s` of the launch window the run's own times
// stand; outside it they are replaced by the launcher's (start at launch,
// the run's own duration kept when it is plausible), and the skew is
// reported. Pure.
struct RunClock {
  std::string started_at;
  std::optional<std::string> ended_at;
  std::optional<double> skew_s;  // set when corrected: rank 0's clock minus the launcher's
};
RunClock ReconcileRunClock(const std::string& run_started_at,
                           const std::optional<std::string>& run_ended_at,
                           const std::string& launched_at, const std::string& returned_at,
                           double tolerance_s = 300);

}  // namespace fabtrack
