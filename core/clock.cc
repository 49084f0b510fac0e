#include "core/clock.h"

#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>

#include "core/pattern.h"

namespace fabtrack {

namespace {

bool Digits(std::string_view s, size_t at, size_t n, int* out) {
  if (at + n > s.size()) return false;
  int v = 0;
  for (size_t i = at; i < at + n; ++i) {
    if (s[i] < '0' || s[i] > '9') return false;
    v = v * 10 + (s[i] - '0');
  }
  *out = v;
  return true;
}

// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's
// days_from_civil).
long long DaysFromCivil(int y, int m, int d) {
  y -= m <= 2;
  const long long era = (y >= 0 ? y : y - 399) / 400;
  const unsigned yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<long long>(doe) - 719468;
}

// The date of a day since 1970-01-01 (Howard Hinnant's civil_from_days, the
// inverse of DaysFromCivil).
void CivilFromDays(long long z, int* y, int* m, int* d) {
  z += 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const unsigned doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  *d = static_cast<int>(doy - (153 * mp + 2) / 5 + 1);
  *m = static_cast<int>(mp < 10 ? mp + 3 : mp - 9);
  *y = static_cast<int>(static_cast<long long>(yoe) + era * 400 + (*m <= 2));
}

// The one writer of fabtrack's timestamps: `whole` seconds since the epoch
// plus `micros` (0..999999, written only in kMicroseconds).
std::string FormatIso(long long whole, long long micros, IsoStyle style) {
  long long days = whole >= 0 ? whole / 86400 : (whole - 86399) / 86400;
  long long in_day = whole - days * 86400;
  int y, mo, d;
  CivilFromDays(days, &y, &mo, &d);
  const int h = static_cast<int>(in_day / 3600), mi = static_cast<int>(in_day / 60 % 60),
            sec = static_cast<int>(in_day % 60);
  char out[64];
  switch (style) {
    case IsoStyle::kBasic:
      std::snprintf(out, sizeof out, "%04d%02d%02dT%02d%02d%02dZ", y, mo, d, h, mi, sec);
      break;
    case IsoStyle::kSeconds:
      std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02dZ", y, mo, d, h, mi, sec);
      break;
    case IsoStyle::kMicroseconds:
      std::snprintf(out, sizeof out, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", y, mo, d, h, mi, sec,
                    micros);
      break;
  }
  return out;
}

}  // namespace

std::optional<double> ParseIsoSeconds(std::string_view s) {
  int y, mo, d, h, mi, sec;
  if (!Digits(s, 0, 4, &y) || s.size() < 19 || s[4] != '-' || !Digits(s, 5, 2, &mo) ||
      s[7] != '-' || !Digits(s, 8, 2, &d) || (s[10] != 'T' && s[10] != ' ') ||
      !Digits(s, 11, 2, &h) || s[13] != ':' || !Digits(s, 14, 2, &mi) || s[16] != ':' ||
      !Digits(s, 17, 2, &sec)) {
    return std::nullopt;
  }
  if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60) return std::nullopt;
  size_t at = 19;
  double fraction = 0;
  if (at < s.size() && s[at] == '.') {
    size_t end = at + 1;
    while (end < s.size() && s[end] >= '0' && s[end] <= '9') ++end;
    if (end == at + 1) return std::nullopt;
    std::from_chars(s.data() + at, s.data() + end, fraction);
    at = end;
  }
  int offset = 0;
  if (at < s.size() && (s[at] == 'Z' || s[at] == 'z')) {
    ++at;
  } else if (at < s.size() && (s[at] == '+' || s[at] == '-')) {
    int oh, om;
    if (!Digits(s, at + 1, 2, &oh) || at + 3 >= s.size() || s[at + 3] != ':' ||
        !Digits(s, at + 4, 2, &om) || oh > 23 || om > 59) {
      return std::nullopt;
    }
    offset = (s[at] == '+' ? 1 : -1) * (oh * 3600 + om * 60);
    at += 6;
  } else {
    return std::nullopt;  // a time without its zone is ambiguous
  }
  if (at != s.size()) return std::nullopt;
  return static_cast<double>(DaysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - offset) +
         fraction;
}

std::string UtcNowIso() {
  const long long us = std::chrono::duration_cast<std::chrono::microseconds>(
                           std::chrono::system_clock::now().time_since_epoch())
                           .count();
  return FormatIso(us / 1000000, us % 1000000, IsoStyle::kMicroseconds);
}

std::string IsoFromSeconds(double seconds, IsoStyle style) {
  double whole = std::floor(seconds);
  long long us = 0;
  if (style == IsoStyle::kMicroseconds) {
    us = std::llround((seconds - whole) * 1e6);
    if (us >= 1000000) {
      whole += 1;
      us -= 1000000;
    }
  }
  return FormatIso(static_cast<long long>(whole), us, style);
}

std::optional<std::string> NormalizeTimestamp(const std::string& text) {
  static const Pattern iso(
      R"(^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(Z|[+-]\d{2}(?::?\d{2})?)?$)");
  PatternMatch m;
  if (!iso.Matches(text, &m)) return std::nullopt;
  int month = std::stoi(m.str(2)), day = std::stoi(m.str(3));
  if (month < 1 || month > 12 || day < 1 || day > 31) return std::nullopt;
  if (m.matched(4) && (std::stoi(m.str(4)) > 23 || std::stoi(m.str(5)) > 59)) return std::nullopt;
  if (m.matched(6) && std::stoi(m.str(6)) > 60) return std::nullopt;
  std::string out = m.str(1) + "-" + m.str(2) + "-" + m.str(3) + "T" +
                    (m.matched(4) ? m.str(4) + ":" + m.str(5) : "00:00") + ":" +
                    (m.matched(6) ? m.str(6) : "00") + (m.matched(7) ? m.str(7) : "");
  // A timestamp without zone is taken as UTC, so results do not depend on
  // the ingesting machine's TZ.
  // Offsets as RFC 3339 writes them (+05:30), whatever the hand typed (+0530, +05).
  const std::string zone = m.str(8);
  if (!m.matched(8)) {
    out += "Z";
  } else if (zone == "Z" || zone.size() == 6) {
    out += zone;
  } else {
    out += zone.substr(0, 3) + ":" + (zone.size() == 3 ? "00" : zone.substr(zone.size() - 2));
  }
  return out;
}

OperatorTime ParseOperatorTime(std::string_view text, const OperatorTimeRules& rules, double now) {
  const std::string value(text);
  OperatorTime out;
  std::optional<std::string> normalized = NormalizeTimestamp(value);
  std::optional<double> seconds = normalized ? ParseIsoSeconds(*normalized) : std::nullopt;
  if (!seconds) {
    out.why = value +
              ": not a time; use RFC 3339 (2026-12-01T02:00:00Z, "
              "2026-12-01T03:00:00+01:00) or a date (2026-12-01)";
    return out;
  }
  const int year = std::stoi(value.substr(0, 4)), month = std::stoi(value.substr(5, 2)),
            day = std::stoi(value.substr(8, 2));
  if (year < 1970 || year > 9999) {
    out.why = value + ": year " + value.substr(0, 4) + " is out of range (1970 to 9999)";
    return out;
  }
  static const char* const kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
  // The first of the next month, less one day, is the month's last day.
  const int days_in_month = static_cast<int>(
      DaysFromCivil(month == 12 ? year + 1 : year, month == 12 ? 1 : month + 1, 1) -
      DaysFromCivil(year, month, 1));
  if (day > days_in_month) {
    out.why = value + ": no such date (" + kMonths[month - 1] + " " + value.substr(0, 4) + " has " +
              std::to_string(days_in_month) + " days)";
    return out;
  }
  const bool date_only = value.size() == 10;
  if (date_only && rules.date_means_end_of_day) *seconds += 86400 - 1;
  if (rules.refuse_far_future && *seconds > now + 86400) {
    out.why = value + ": more than a day in the future (now " +
              IsoFromSeconds(now, IsoStyle::kSeconds) + ")";
    out.far_future = true;
    return out;
  }
  if (rules.refuse_past && *seconds <= now) {
    out.why = value + ": not in the future (now " + IsoFromSeconds(now, IsoStyle::kSeconds) + ")";
    return out;
  }
  const bool fraction = normalized->find('.') != std::string::npos;
  out.iso = IsoFromSeconds(*seconds, fraction ? IsoStyle::kMicroseconds : IsoStyle::kSeconds);
  return out;
}

RunClock ReconcileRunClock(const std::string& run_started_at,
                           const std::optional<std::string>& run_ended_at,
                           const std::string& launched_at, const std::string& returned_at,
                           double tolerance_s) {
  RunClock c{run_started_at, run_ended_at, std::nullopt};
  const auto start = ParseIsoSeconds(run_started_at);
  const auto launch = ParseIsoSeconds(launched_at);
  const auto back = ParseIsoSeconds(returned_at);
  if (!start || !launch || !back || *back < *launch) return c;
  if (*start >= *launch - tolerance_s && *start <= *back + tolerance_s) return c;
  c.skew_s = *start - *launch;
  c.started_at = IsoFromSeconds(*launch);
  std::optional<double> end = run_ended_at ? ParseIsoSeconds(*run_ended_at) : std::nullopt;
  const double duration = end ? *end - *start : -1;
  // The run's own duration when it fits the launch window, else the window.
  c.ended_at = IsoFromSeconds(
      duration >= 0 && duration <= *back - *launch + tolerance_s ? *launch + duration : *back);
  return c;
}

int64_t NightOf(double started_at) {
  return static_cast<int64_t>(std::floor((started_at - 12 * 3600.0) / 86400.0));
}

}  // namespace fabtrack
