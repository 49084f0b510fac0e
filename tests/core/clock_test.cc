// core/clock's hand-written calendar against epoch values computed
// independently (Python's datetime.fromisoformat(...).timestamp()).
#include "core/clock.h"

#include <gtest/gtest.h>

namespace fabtrack {
namespace {

TEST(IsoClockTest, ParsesCenturyAndLeapDays) {
  EXPECT_EQ(ParseIsoSeconds("2000-02-29T23:59:59Z"), 951868799.0);    // 400-year leap day
  EXPECT_EQ(ParseIsoSeconds("1900-03-01T00:00:00Z"), -2203891200.0);  // 1900: no Feb 29
  EXPECT_EQ(ParseIsoSeconds("2100-02-28T12:00:00Z"), 4107499200.0);
  EXPECT_EQ(ParseIsoSeconds("2400-02-29T00:00:00Z"), 13574563200.0);
  EXPECT_EQ(ParseIsoSeconds("1969-12-31T23:59:59Z"), -1.0);
  EXPECT_EQ(ParseIsoSeconds("2038-01-19T03:14:08Z"), 2147483648.0);  // past 32-bit time_t
  // A leap second (23:59:60) counts as the first second of the next day, as
  // POSIX time has none.
  EXPECT_EQ(ParseIsoSeconds("2016-12-31T23:59:60Z"), 1483228800.0);
}

TEST(IsoClockTest, ParsesZonesOffsetsAndFractions) {
  EXPECT_EQ(ParseIsoSeconds("2000-03-01T01:00:00+01:00"), 951868800.0);
  EXPECT_EQ(ParseIsoSeconds("2000-02-29T19:00:00-05:00"), 951868800.0);
  EXPECT_EQ(ParseIsoSeconds("2000-03-01T05:30:00+05:30"), 951868800.0);
  EXPECT_EQ(ParseIsoSeconds("2000-03-01 00:00:00z"), 951868800.0);  // space, lower-case z
  EXPECT_DOUBLE_EQ(*ParseIsoSeconds("2000-02-29T23:59:59.5Z"), 951868799.5);
  EXPECT_DOUBLE_EQ(*ParseIsoSeconds("2000-02-29T23:59:59.123456789Z"), 951868799.123456789);
  for (const char* bad : {"2000-02-29T23:59:59+0100", "2000-02-29T23:59:59+01", "2000-02-29",
                          "2000-02-29T24:00:00Z", "2000-02-29T23:60:00Z", "2000-00-10T00:00:00Z",
                          "2000-02-29T23:59:59+24:00", "2000-02-29T23:59:59 Z"}) {
    EXPECT_FALSE(ParseIsoSeconds(bad).has_value()) << bad;
  }
}

TEST(IsoClockTest, WritesEachStyle) {
  EXPECT_EQ(IsoFromSeconds(951868799.5), "2000-02-29T23:59:59.500000Z");
  EXPECT_EQ(IsoFromSeconds(951868799.5, IsoStyle::kSeconds), "2000-02-29T23:59:59Z");
  EXPECT_EQ(IsoFromSeconds(951868799.5, IsoStyle::kBasic), "20000229T235959Z");
  EXPECT_EQ(IsoFromSeconds(0), "1970-01-01T00:00:00.000000Z");
  EXPECT_EQ(IsoFromSeconds(-1.25), "1969-12-31T23:59:58.750000Z");
  EXPECT_EQ(IsoFromSeconds(-2203891200.0, IsoStyle::kSeconds), "1900-03-01T00:00:00Z");
  EXPECT_EQ(IsoFromSeconds(13574563200.0, IsoStyle::kSeconds), "2400-02-29T00:00:00Z");
  EXPECT_EQ(IsoFromSeconds(2147483648.0, IsoStyle::kSeconds), "2038-01-19T03:14:08Z");
  // Microseconds round; a round up to the next second carries into it.
  EXPECT_EQ(IsoFromSeconds(1483228799.9999996), "2017-01-01T00:00:00.000000Z");
}

TEST(IsoClockTest, RoundTripsEveryDayOfFourCenturies) {
  // From 1900-01-01 to 2300-01-01, a day at a time: writer and parser agree.
  for (double t = -2208988800.0; t < 10413792000.0; t += 86400 * 7 + 3661) {
    auto back = ParseIsoSeconds(IsoFromSeconds(t, IsoStyle::kSeconds));
    ASSERT_TRUE(back.has_value()) << t;
    ASSERT_EQ(*back, t) << IsoFromSeconds(t);
  }
}

TEST(IsoClockTest, NowIsRecordedWithMicroseconds) {
  const std::string now = UtcNowIso();
  ASSERT_EQ(now.size(), 27u) << now;
  EXPECT_EQ(now[19], '.');
  EXPECT_EQ(now.back(), 'Z');
  EXPECT_TRUE(ParseIsoSeconds(now).has_value());
}

TEST(NormalizeTimestampTest, CompletesWhatPeopleType) {
  EXPECT_EQ(NormalizeTimestamp("2026-12-01"), "2026-12-01T00:00:00Z");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01 02:00"), "2026-12-01T02:00:00Z");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00.250+05:30"), "2026-12-01T02:00:00.250+05:30");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00Z; DROP TABLE runs"), std::nullopt);
}

TEST(NormalizeTimestampTest, WritesOffsetsAsRfc3339) {
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00+0530"), "2026-12-01T02:00:00+05:30");
  EXPECT_EQ(NormalizeTimestamp("2026-12-01T02:00:00-02"), "2026-12-01T02:00:00-02:00");
  EXPECT_TRUE(ParseIsoSeconds(*NormalizeTimestamp("2026-12-01T02:00:00-02")));
}

// Times typed on a command line: one check for every option that takes one.
TEST(ParseOperatorTimeTest, RefusesDatesThatDoNotExistAndYearsOutOfRange) {
  const double now = *ParseIsoSeconds("2026-12-05T06:00:00Z");
  const OperatorTimeRules rules;
  OperatorTime t = ParseOperatorTime("2026-02-30", rules, now);
  EXPECT_EQ(t.iso, std::nullopt);
  EXPECT_EQ(t.why, "2026-02-30: no such date (February 2026 has 28 days)");
  EXPECT_EQ(ParseOperatorTime("2028-02-29", rules, now).iso, "2028-02-29T00:00:00Z");
  EXPECT_EQ(ParseOperatorTime("2026-04-31T02:00:00Z", rules, now).why,
            "2026-04-31T02:00:00Z: no such date (April 2026 has 30 days)");
  t = ParseOperatorTime("0000-01-01", rules, now);
  EXPECT_EQ(t.iso, std::nullopt);
  EXPECT_EQ(t.why, "0000-01-01: year 0000 is out of range (1970 to 9999)");
  t = ParseOperatorTime("yesterday", rules, now);
  EXPECT_EQ(t.iso, std::nullopt);
  EXPECT_EQ(t.why.rfind("yesterday: not a time; use RFC 3339", 0), 0u) << t.why;
}

TEST(ParseOperatorTimeTest, WritesUtcRfc3339) {
  const double now = *ParseIsoSeconds("2026-12-05T06:00:00Z");
  const OperatorTimeRules rules;
  EXPECT_EQ(ParseOperatorTime("2026-12-01T03:00:00+01:00", rules, now).iso, "2026-12-01T02:00:00Z");
  EXPECT_EQ(ParseOperatorTime("2026-12-01 02:00", rules, now).iso, "2026-12-01T02:00:00Z");
  EXPECT_EQ(ParseOperatorTime("2026-12-01T02:00:00.25Z", rules, now).iso,
            "2026-12-01T02:00:00.250000Z");
}

TEST(ParseOperatorTimeTest, FarFutureRefusedWhenTheOptionSaysSo) {
  const double now = *ParseIsoSeconds("2026-12-05T06:00:00Z");
  OperatorTimeRules when_it_happened;
  when_it_happened.refuse_far_future = true;
  OperatorTime t = ParseOperatorTime("9999-12-31T23:59:59Z", when_it_happened, now);
  EXPECT_EQ(t.iso, std::nullopt);
  EXPECT_EQ(t.why,
            "9999-12-31T23:59:59Z: more than a day in the future (now 2026-12-05T06:00:00Z)");
  EXPECT_TRUE(t.far_future);
  EXPECT_EQ(ParseOperatorTime("2030-01-01", when_it_happened, now).iso, std::nullopt);
  // Within a day: a clock a little ahead, a night run's own zone.
  EXPECT_EQ(ParseOperatorTime("2026-12-06T05:00:00Z", when_it_happened, now).iso,
            "2026-12-06T05:00:00Z");
  EXPECT_EQ(ParseOperatorTime("9999-12-31T23:59:59Z", OperatorTimeRules{}, now).iso,
            "9999-12-31T23:59:59Z");
}

TEST(ParseOperatorTimeTest, AnUntilDateMeansTheEndOfThatDay) {
  const double now = *ParseIsoSeconds("2026-12-05T06:00:00Z");
  OperatorTimeRules until;
  until.date_means_end_of_day = true;
  until.refuse_past = true;
  EXPECT_EQ(ParseOperatorTime("2026-12-31", until, now).iso, "2026-12-31T23:59:59Z");
  EXPECT_EQ(ParseOperatorTime("2026-12-31T00:00:00Z", until, now).iso, "2026-12-31T00:00:00Z");
  // Today's date is still in force until midnight.
  EXPECT_EQ(ParseOperatorTime("2026-12-05", until, now).iso, "2026-12-05T23:59:59Z");
  OperatorTime t = ParseOperatorTime("2020-01-01", until, now);
  EXPECT_EQ(t.iso, std::nullopt);
  EXPECT_EQ(t.why, "2020-01-01: not in the future (now 2026-12-05T06:00:00Z)");
}

TEST(NightOfTest, NightsStartAtNoonUtc) {
  const double noon = *ParseIsoSeconds("2026-12-01T12:00:00Z");
  EXPECT_EQ(NightOf(noon), NightOf(noon + 86399));
  EXPECT_EQ(NightOf(noon) + 1, NightOf(noon + 86400));
  EXPECT_EQ(NightOf(noon - 1) + 1, NightOf(noon));
}

}  // namespace
}  // namespace fabtrack
