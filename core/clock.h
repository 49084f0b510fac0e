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
// How IsoFromSeconds writes a time (always UTC, proleptic Gregorian).
enum class IsoStyle {
  kMicroseconds,  // "2026-12-01T02:00:00.123456Z": how UtcNowIso writes recorded times
  kSeconds,       // "2026-12-01T02:00:00Z": cut to the second, for people
  kBasic,         // "20261201T020000Z": ISO 8601 basic format, for identifiers
};
// `seconds` since the epoch written in `style` (microseconds rounded to the
// nearest, the other styles cut to the whole second below).
std::string IsoFromSeconds(double seconds, IsoStyle style = IsoStyle::kMicroseconds);

// Validates an ISO 8601 timestamp as people type it ("2026-12-01",
// "2026-12-01T02:00:00Z", "2026-12-01 02:00:00+02:00", "2026-12-01 02:00");
// returns it normalised to RFC 3339 for PostgreSQL and ParseIsoSeconds (a
// missing time is midnight, a missing zone UTC), or nullopt when malformed.
std::optional<std::string> NormalizeTimestamp(const std::string& text);

// A time an operator typed on a command line (--at, --since, --until),
// checked before anything runs: the forms NormalizeTimestamp takes, a date
// that exists (no 2026-02-30), a year from 1970 to 9999, and the limits the
// option sets. Pure: `now` (epoch seconds) is the caller's.
struct OperatorTimeRules {
  // What a date without a time means: the start of the day (--at, --since)
  // or its end, 23:59:59 UTC (--until 2026-12-31 silences through the 31st).
  bool date_means_end_of_day = false;
  // Refuse a time more than a day after `now` (a mistyped year would
  // otherwise put a run, or the analysis window, out of reach).
  bool refuse_far_future = false;
  // Refuse a time at or before `now` (a silence that ended already).
  bool refuse_past = false;
};
struct OperatorTime {
  std::optional<std::string> iso;  // RFC 3339 in UTC ("2026-12-01T02:00:00Z"), when usable
  std::string why;                 // else why not, naming the value ("2026-02-30: no such date")
  bool far_future = false;         // refused by refuse_far_future (a flag may allow it)
};
OperatorTime ParseOperatorTime(std::string_view text, const OperatorTimeRules& rules, double now);

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
