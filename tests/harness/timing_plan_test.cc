// The NCCL backend's timing plan (timing_plan.h), checked without CUDA: what
// goes on the stream in which order, and how event times become samples.
#include "collector/harness/timing_plan.h"

#include <gtest/gtest.h>

#include <numeric>

namespace fabtrack::harness {
namespace {

using Kind = StreamStep::Kind;

int CountKind(const TimedChunk& chunk, Kind kind) {
  int n = 0;
  for (const StreamStep& s : chunk.steps) n += s.kind == kind;
  return n;
}

TEST(TimingPlanTest, MeanLoopIsNcclTestsMethodNothingBetweenTheCalls) {
  // nccl-tests: start, the calls back to back, stop, one wait at the end.
  const std::optional<TimedChunk> mean = PlanMeanLoop(TimingOptions{}, 3);
  ASSERT_TRUE(mean);
  const std::vector<StreamStep> expected = {{Kind::kRecordEvent, 0}, {Kind::kCollective, 0},
                                            {Kind::kCollective, 0},  {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 1}, {Kind::kWaitForStream, 0}};
  EXPECT_EQ(mean->steps, expected);
  EXPECT_EQ(mean->intervals, (std::vector<TimedInterval>{{0, 1, 3}}));
  EXPECT_EQ(mean->events, 2);
  // 30 us over 3 calls: 10 us each.
  EXPECT_NEAR(IntervalTimesUs(*mean, {1.0, 1.030})[0], 10.0, 1e-6);
  EXPECT_TRUE(GraphCapture(TimingOptions{}, 3).empty());
}

TEST(TimingPlanTest, SamplesComeFromASecondLoopWithAnEventBetweenNeighbours) {
  const TimingOptions back_to_back;
  ASSERT_EQ(SampleChunkCount(back_to_back, 3), 1);
  const TimedChunk chunk = PlanSampleChunk(back_to_back, 3, 0);
  const std::vector<StreamStep> expected = {{Kind::kRecordEvent, 0}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 1}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 2}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 3}, {Kind::kWaitForStream, 0}};
  EXPECT_EQ(chunk.steps, expected);
  EXPECT_EQ(chunk.events, 4);
  const std::vector<TimedInterval> intervals = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}};
  EXPECT_EQ(chunk.intervals, intervals);
  EXPECT_EQ(EventPoolSize(back_to_back, 3), 4);
}

TEST(TimingPlanTest, NoHostWaitInsideEitherLoop) {
  const TimingOptions o;
  const TimedChunk samples = PlanSampleChunk(o, 500, 0);
  EXPECT_EQ(CountKind(samples, Kind::kWaitForStream), 1);
  EXPECT_EQ(samples.steps.back().kind, Kind::kWaitForStream);
  EXPECT_EQ(CountKind(samples, Kind::kCollective), 500);
  EXPECT_EQ(CountKind(samples, Kind::kRecordEvent), 501);
  const TimedChunk mean = *PlanMeanLoop(o, 500);
  EXPECT_EQ(CountKind(mean, Kind::kWaitForStream), 1);
  EXPECT_EQ(mean.steps.back().kind, Kind::kWaitForStream);
  EXPECT_EQ(CountKind(mean, Kind::kCollective), 500);
  EXPECT_EQ(CountKind(mean, Kind::kRecordEvent), 2);
}

TEST(TimingPlanTest, SampleDeltasTelescopeToTheSpanOverTheCalls) {
  const TimedChunk chunk = PlanSampleChunk(TimingOptions{}, 4, 0);
  const std::vector<double> event_ms = {0.0, 0.006, 0.0115, 0.0190, 0.0250};
  const std::vector<double> us = IntervalTimesUs(chunk, event_ms);
  ASSERT_EQ(us.size(), 4u);
  EXPECT_NEAR(us[0], 6.0, 1e-9);
  EXPECT_NEAR(us[1], 5.5, 1e-9);
  EXPECT_NEAR(us[2], 7.5, 1e-9);
  EXPECT_NEAR(us[3], 6.0, 1e-9);
  EXPECT_NEAR(std::accumulate(us.begin(), us.end(), 0.0) / 4, 25.0 / 4, 1e-9);
}

TEST(TimingPlanTest, WithoutPerIterationTimingOnlyTheMeanLoopRuns) {
  TimingOptions mean_only;
  mean_only.per_iteration_events = false;
  EXPECT_EQ(SampleChunkCount(mean_only, 5000), 0);
  EXPECT_THROW(PlanSampleChunk(mean_only, 5000, 0), std::out_of_range);
  EXPECT_EQ(EventPoolSize(mean_only, 5000), 2);
  ASSERT_TRUE(PlanMeanLoop(mean_only, 5000));
  EXPECT_EQ(PlanMeanLoop(mean_only, 5000)->intervals, (std::vector<TimedInterval>{{0, 1, 5000}}));
}

TEST(TimingPlanTest, BlockingWaitsAfterEveryCallAndHasNoMeanLoop) {
  TimingOptions blocking;
  blocking.blocking = true;
  EXPECT_FALSE(PlanMeanLoop(blocking, 2));
  const TimedChunk chunk = PlanSampleChunk(blocking, 2, 0);
  const std::vector<StreamStep> expected = {{Kind::kRecordEvent, 0}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 1}, {Kind::kWaitForStream, 0},
                                            {Kind::kRecordEvent, 2}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 3}, {Kind::kWaitForStream, 0}};
  EXPECT_EQ(chunk.steps, expected);
  const std::vector<TimedInterval> intervals = {{0, 1, 1}, {2, 3, 1}};
  EXPECT_EQ(chunk.intervals, intervals);
  // The gap between a stop event and the next start (host wait + launch)
  // is not part of any sample.
  const std::vector<double> us = IntervalTimesUs(chunk, {0.0, 0.008, 0.050, 0.057});
  ASSERT_EQ(us.size(), 2u);
  EXPECT_NEAR(us[0], 8.0, 1e-9);
  EXPECT_NEAR(us[1], 7.0, 1e-9);
  // -I does not switch blocking mode's samples off: they are its mean.
  blocking.per_iteration_events = false;
  EXPECT_EQ(SampleChunkCount(blocking, 2), 1);
}

TEST(TimingPlanTest, GraphModeCapturesTheCallsAndTimesLaunches) {
  TimingOptions graph;
  graph.graph_launches = 3;
  const std::vector<StreamStep> capture = GraphCapture(graph, 20);
  ASSERT_EQ(capture.size(), 20u);
  for (const StreamStep& s : capture) EXPECT_EQ(s.kind, Kind::kCollective);
  const TimedChunk mean = *PlanMeanLoop(graph, 20);
  EXPECT_EQ(CountKind(mean, Kind::kGraphLaunch), 3);
  EXPECT_EQ(CountKind(mean, Kind::kCollective), 0);
  EXPECT_EQ(mean.intervals, (std::vector<TimedInterval>{{0, 1, 60}}));
  ASSERT_EQ(SampleChunkCount(graph, 20), 1);
  const TimedChunk chunk = PlanSampleChunk(graph, 20, 0);
  EXPECT_EQ(CountKind(chunk, Kind::kGraphLaunch), 3);
  EXPECT_EQ(CountKind(chunk, Kind::kCollective), 0);
  EXPECT_EQ(CountKind(chunk, Kind::kWaitForStream), 1);
  const std::vector<TimedInterval> intervals = {{0, 1, 20}, {1, 2, 20}, {2, 3, 20}};
  EXPECT_EQ(chunk.intervals, intervals);
  // A launch of 20 calls that took 0.1 ms is 5 us per call.
  const std::vector<double> us = IntervalTimesUs(chunk, {0.0, 0.1, 0.2, 0.32});
  ASSERT_EQ(us.size(), 3u);
  EXPECT_NEAR(us[0], 5.0, 1e-9);
  EXPECT_NEAR(us[2], 6.0, 1e-9);
}

TEST(TimingPlanTest, LongSampleLoopsReuseABoundedEventPoolChunkByChunk) {
  const TimingOptions back_to_back;
  const int iters = 2500;
  EXPECT_EQ(EventPoolSize(back_to_back, iters), kMaxEventsPerChunk);
  const int chunks = SampleChunkCount(back_to_back, iters);
  ASSERT_EQ(chunks, 3);  // 1023 + 1023 + 454
  int calls = 0, samples = 0;
  for (int c = 0; c < chunks; ++c) {
    const TimedChunk chunk = PlanSampleChunk(back_to_back, iters, c);
    EXPECT_LE(chunk.events, EventPoolSize(back_to_back, iters));
    EXPECT_EQ(chunk.steps.back().kind, Kind::kWaitForStream);
    calls += CountKind(chunk, Kind::kCollective);
    samples += static_cast<int>(chunk.intervals.size());
  }
  EXPECT_EQ(calls, iters);
  EXPECT_EQ(samples, iters);
  EXPECT_EQ(PlanSampleChunk(back_to_back, iters, 2).events, 455);
  EXPECT_THROW(PlanSampleChunk(back_to_back, iters, 3), std::out_of_range);

  TimingOptions blocking;
  blocking.blocking = true;
  EXPECT_EQ(EventPoolSize(blocking, iters), kMaxEventsPerChunk);
  EXPECT_EQ(SampleChunkCount(blocking, iters), 5);  // 512 per chunk
}

TEST(TimingPlanTest, TooFewEventTimesIsAnError) {
  const TimedChunk chunk = PlanSampleChunk(TimingOptions{}, 3, 0);
  EXPECT_THROW(IntervalTimesUs(chunk, {0.0, 1.0}), std::invalid_argument);
}

TEST(TimingPlanTest, NoIterationsPlanNothing) {
  EXPECT_EQ(SampleChunkCount(TimingOptions{}, 0), 0);
  EXPECT_FALSE(PlanMeanLoop(TimingOptions{}, 0));
  EXPECT_EQ(EventPoolSize(TimingOptions{}, 0), 0);
}

}  // namespace
}  // namespace fabtrack::harness
