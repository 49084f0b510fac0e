#include <gtest/gtest.h>

#include "core/clock.h"

namespace fabtrack {
namespace {

TEST(ClockTest, ParsesRfc3339WithFractionsAndOffsets) {
  EXPECT_EQ(ParseIsoSeconds("1970-01-01T00:00:00Z"), 0.0);
  EXPECT_EQ(ParseIsoSeconds("2026-12-01T02:00:00Z"), 1796090400.0);
  EXPECT_NEAR(*ParseIsoSeconds("2026-12-01T02:00:00.250000Z"), 1796090400.25, 1e-6);
  EXPECT_EQ(ParseIsoSeconds("2026-12-01T03:30:00+01:30"), 1796090400.0);
  EXPECT_EQ(ParseIsoSeconds("2026-11-30T21:00:00-05:00"), 1796090400.0);
  EXPECT_EQ(ParseIsoSeconds("2024-02-29T00:00:00Z"), 1709164800.0);  // a leap day
  for (const char* bad :
       {"", "2026-12-01", "2026-12-01T02:00:00", "2026-13-01T00:00:00Z", "2026-12-01T02:00:00.Z",
        "2026-12-01T02:00:00Zjunk", "x026-12-01T02:00:00Z"}) {
    EXPECT_FALSE(ParseIsoSeconds(bad).has_value()) << bad;
  }
  EXPECT_EQ(IsoFromSeconds(1796090400.25), "2026-12-01T02:00:00.250000Z");
  EXPECT_EQ(ParseIsoSeconds(UtcNowIso()).has_value(), true);
}

TEST(ClockTest, RunTimesWithinTheLaunchWindowStand) {
  RunClock c = ReconcileRunClock("2026-12-01T02:00:01.5Z", "2026-12-01T02:00:40Z",
                                 "2026-12-01T02:00:00Z", "2026-12-01T02:00:41Z");
  EXPECT_FALSE(c.skew_s.has_value());
  EXPECT_EQ(c.started_at, "2026-12-01T02:00:01.5Z");
  // A few minutes of skew are within the tolerance: left alone.
  EXPECT_FALSE(ReconcileRunClock("2026-12-01T02:03:00Z", std::nullopt, "2026-12-01T02:00:00Z",
                                 "2026-12-01T02:00:41Z")
                   .skew_s.has_value());
}

// Rank 0's node is an hour ahead (or a day behind): the run is placed at the
// launcher's time, its own duration kept, and the skew reported.
TEST(ClockTest, SkewedRankZeroClockIsReplacedByTheLaunchersTimes) {
  RunClock ahead = ReconcileRunClock("2026-12-01T03:00:02Z", "2026-12-01T03:00:32Z",
                                     "2026-12-01T02:00:00Z", "2026-12-01T02:00:35Z");
  ASSERT_TRUE(ahead.skew_s.has_value());
  EXPECT_DOUBLE_EQ(*ahead.skew_s, 3602);
  EXPECT_EQ(ahead.started_at, "2026-12-01T02:00:00.000000Z");
  EXPECT_EQ(ahead.ended_at, "2026-12-01T02:00:30.000000Z");

  RunClock behind = ReconcileRunClock("2026-11-30T02:00:00Z", "2026-11-30T05:00:00Z",
                                      "2026-12-01T02:00:00Z", "2026-12-01T02:00:35Z");
  ASSERT_TRUE(behind.skew_s.has_value());
  EXPECT_DOUBLE_EQ(*behind.skew_s, -86400);
  // Three hours of run in a 35 s window is not plausible: the window's end.
  EXPECT_EQ(behind.ended_at, "2026-12-01T02:00:35.000000Z");
}

}  // namespace
}  // namespace fabtrack
