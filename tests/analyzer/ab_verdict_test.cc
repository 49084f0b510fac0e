// The A/B verdict over constructed samples: a clear difference is flagged
// with its direction, identical-looking noisy samples are not, and the
// judgement of whole runs pairs sides by round and sizes across rounds.
#include "analyzer/ab_verdict.h"

#include <gtest/gtest.h>

namespace fabtrack::analyzer {
namespace {

TEST(AbVerdict, ClearBusbwGainIsBFasterBeyondNoise) {
  AbJudgement j = JudgeFigure({20.0, 20.4, 19.8}, {24.1, 24.0, 23.8}, /*higher_is_better=*/true);
  EXPECT_EQ(j.outcome, AbOutcome::kBFaster);
  EXPECT_NEAR(j.ratio, 24.0 / 20.0, 1e-12);
  EXPECT_NEAR(j.ratio_low, 24.0 / 20.4, 1e-12);  // the per-round ratios' range
  EXPECT_NEAR(j.ratio_high, 24.1 / 20.0, 1e-12);
  EXPECT_NEAR(j.noise, (20.4 - 19.8) / 20.0, 1e-12);
  EXPECT_EQ(DescribeJudgement(j), "B faster by 20.0% (beyond noise 3.0%)");
}

TEST(AbVerdict, MoreTimeIsBSlower) {
  AbJudgement j = JudgeFigure({10.0, 10.1}, {13.0, 13.2}, /*higher_is_better=*/false);
  EXPECT_EQ(j.outcome, AbOutcome::kBSlower);
  EXPECT_GT(j.ratio, 1.25);
}

TEST(AbVerdict, SameNoisySamplesAreNoDifference) {
  // One configuration measured six times, dealt to the sides: overlapping.
  AbJudgement j = JudgeFigure({10.0, 11.0, 9.5}, {10.5, 9.8, 10.9}, true);
  EXPECT_EQ(j.outcome, AbOutcome::kNoDifference);
  EXPECT_NEAR(j.noise, 1.5 / 10.0, 1e-12);
  EXPECT_EQ(DescribeJudgement(j), "no difference beyond noise (15.0% noise)");
}

TEST(AbVerdict, SeparatedButWithinNoiseIsNoDifference) {
  // B's repeats all above A's, but the step is smaller than A's own spread.
  AbJudgement j = JudgeFigure({10.0, 12.0}, {12.1, 12.2}, true);
  EXPECT_EQ(j.outcome, AbOutcome::kNoDifference) << j.ratio << " " << j.noise;
  // Apart, and a step (7.8%) above the spread (4.9%) but not twice it: two
  // repeats a side land apart by chance too often to call that.
  AbJudgement close = JudgeFigure({10.0, 10.5}, {11.0, 11.1}, true);
  EXPECT_EQ(close.outcome, AbOutcome::kNoDifference) << close.ratio << " " << close.noise;
}

TEST(AbVerdict, TinyDifferenceOnAQuietBoxIsBelowTheMinimumEffect) {
  AbJudgement j = JudgeFigure({100.0, 100.0}, {101.0, 101.0}, true);
  EXPECT_EQ(j.noise, 0);
  EXPECT_EQ(j.outcome, AbOutcome::kNoDifference);
}

TEST(AbVerdict, OneRepeatASideIsInconclusive) {
  AbJudgement j = JudgeFigure({10.0}, {20.0}, true);
  EXPECT_EQ(j.outcome, AbOutcome::kInconclusive);
  EXPECT_DOUBLE_EQ(j.ratio, 2.0);
}

RunRecord MeasuredRun(int nodes, std::vector<std::tuple<int64_t, double, double>> rows) {
  RunRecord run;
  run.collective = "all_reduce";
  run.nodes = nodes;
  for (auto [size, busbw, time] : rows) {
    ResultRow r;
    r.row.size_bytes = size;
    r.row.oop = Measurement{};
    r.row.oop->busbw_gbps = busbw;
    r.row.oop->time_us = time;
    run.results.push_back(r);
  }
  return run;
}

TEST(AbVerdict, RunsArePairedByRoundAndJudgedPerSeriesAndSize) {
  constexpr int64_t kBig = int64_t{128} << 20;
  // A B B A: B doubles busbw at 128 MiB, small-size time the same (noisy).
  RunRecord a1 = MeasuredRun(2, {{8, 0.01, 20.0}, {kBig, 10.0, 2e4}});
  RunRecord b1 = MeasuredRun(2, {{8, 0.01, 21.0}, {kBig, 20.0, 1e4}});
  RunRecord b2 = MeasuredRun(2, {{8, 0.01, 19.5}, {kBig, 20.5, 1e4}});
  RunRecord a2 = MeasuredRun(2, {{8, 0.01, 20.5}, {kBig, 10.2, 2e4}, {kBig * 2, 11.0, 4e4}});
  AbRecord record;
  JudgeAbRuns({{'A', 1, &a1}, {'B', 1, &b1}, {'B', 2, &b2}, {'A', 2, &a2}}, &record);
  ASSERT_EQ(record.headlines.size(), 2u);
  const AbJudgement& busbw = record.headlines[0];
  EXPECT_EQ(busbw.metric, "busbw");
  EXPECT_EQ(busbw.nodes, 2);
  EXPECT_FALSE(busbw.size_bytes);
  EXPECT_EQ(busbw.a, (std::vector<double>{10.0, 10.2}));  // round order, 256 MiB not in every run
  EXPECT_EQ(busbw.b, (std::vector<double>{20.0, 20.5}));
  EXPECT_EQ(busbw.outcome, AbOutcome::kBFaster);
  const AbJudgement& time = record.headlines[1];
  EXPECT_EQ(time.metric, "time");
  EXPECT_EQ(time.a, (std::vector<double>{20.0, 20.5}));  // only 8 B is latency-bound
  EXPECT_EQ(time.outcome, AbOutcome::kNoDifference);
  // Sizes: 8 B and 128 MiB, busbw and time each.
  ASSERT_EQ(record.sizes.size(), 4u);
  EXPECT_EQ(record.sizes[1].size_bytes, kBig);
  EXPECT_EQ(record.sizes[1].outcome, AbOutcome::kBFaster);
  EXPECT_EQ(record.sizes[3].metric, "time");
  EXPECT_EQ(record.sizes[3].outcome, AbOutcome::kBFaster);  // half the time at 128 MiB
  EXPECT_EQ(record.outcome, AbOutcome::kBFaster);
}

TEST(AbVerdict, OppositeHeadlinesAreMixedAndWithinNoiseIsNoDifference) {
  RunRecord a1 = MeasuredRun(1, {{8, 1.0, 10.0}, {1 << 20, 10.0, 100.0}});
  RunRecord a2 = MeasuredRun(1, {{8, 1.0, 10.1}, {1 << 20, 10.1, 99.0}});
  RunRecord b1 = MeasuredRun(1, {{8, 1.0, 15.0}, {1 << 20, 13.0, 80.0}});
  RunRecord b2 = MeasuredRun(1, {{8, 1.0, 15.2}, {1 << 20, 13.1, 79.0}});
  AbRecord mixed;
  JudgeAbRuns({{'A', 1, &a1}, {'B', 1, &b1}, {'B', 2, &b2}, {'A', 2, &a2}}, &mixed);
  EXPECT_EQ(mixed.outcome, AbOutcome::kMixed);  // busbw up at 1 MiB, 8 B slower

  AbRecord same;
  JudgeAbRuns({{'A', 1, &a1}, {'B', 1, &a2}, {'B', 2, &a1}, {'A', 2, &a2}}, &same);
  EXPECT_EQ(same.outcome, AbOutcome::kNoDifference);
  EXPECT_NE(AbVerdictText(same).find("verdict: no difference beyond noise"), std::string::npos)
      << AbVerdictText(same);
}

}  // namespace
}  // namespace fabtrack::analyzer
