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

TEST(TimingPlanTest, BackToBackPutsOneEventBetweenNeighboursAndWaitsOnceAtTheEnd) {
  const TimingOptions back_to_back;
  ASSERT_EQ(TimedChunkCount(back_to_back, 3), 1);
  const TimedChunk chunk = PlanTimedChunk(back_to_back, 3, 0);
  const std::vector<StreamStep> expected = {{Kind::kRecordEvent, 0}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 1}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 2}, {Kind::kCollective, 0},
                                            {Kind::kRecordEvent, 3}, {Kind::kWaitForStream, 0}};
  EXPECT_EQ(chunk.steps, expected);
  EXPECT_EQ(chunk.events, 4);
  const std::vector<TimedInterval> intervals = {{0, 1, 1}, {1, 2, 1}, {2, 3, 1}};
  EXPECT_EQ(chunk.intervals, intervals);
  EXPECT_EQ(EventPoolSize(back_to_back, 3), 4);
  EXPECT_TRUE(GraphCapture(back_to_back, 3).empty());
}

TEST(TimingPlanTest, BackToBackHasNoHostWaitInsideTheTimedCalls) {
  const TimedChunk chunk = PlanTimedChunk(TimingOptions{}, 500, 0);
  ASSERT_FALSE(chunk.steps.empty());
  EXPECT_EQ(CountKind(chunk, Kind::kWaitForStream), 1);
  EXPECT_EQ(chunk.steps.back().kind, Kind::kWaitForStream);
  EXPECT_EQ(CountKind(chunk, Kind::kCollective), 500);
  EXPECT_EQ(CountKind(chunk, Kind::kRecordEvent), 501);
}

TEST(TimingPlanTest, MeanOfBackToBackSamplesIsTheSpanOverTheCalls) {
  // nccl-tests' figure is (end - start) / iters: the deltas between
  // neighbouring events must telescope to it, whatever each delta is.
  const TimedChunk chunk = PlanTimedChunk(TimingOptions{}, 4, 0);
  const std::vector<double> event_ms = {0.0, 0.006, 0.0115, 0.0190, 0.0250};
  const std::vector<double> us = IntervalTimesUs(chunk, event_ms);
  ASSERT_EQ(us.size(), 4u);
  EXPECT_NEAR(us[0], 6.0, 1e-9);
  EXPECT_NEAR(us[1], 5.5, 1e-9);
  EXPECT_NEAR(us[2], 7.5, 1e-9);
  EXPECT_NEAR(us[3], 6.0, 1e-9);
  EXPECT_NEAR(std::accumulate(us.begin(), us.end(), 0.0) / 4, 25.0 / 4, 1e-9);
}

TEST(TimingPlanTest, BlockingWaitsAfterEveryCallBetweenItsOwnEventPair) {
  TimingOptions blocking;
  blocking.blocking = true;
  const TimedChunk chunk = PlanTimedChunk(blocking, 2, 0);
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
}

TEST(TimingPlanTest, GraphModeCapturesTheCallsAndTimesEachLaunch) {
  TimingOptions graph;
  graph.graph_launches = 3;
  const std::vector<StreamStep> capture = GraphCapture(graph, 20);
  ASSERT_EQ(capture.size(), 20u);
  for (const StreamStep& s : capture) EXPECT_EQ(s.kind, Kind::kCollective);
  ASSERT_EQ(TimedChunkCount(graph, 20), 1);
  const TimedChunk chunk = PlanTimedChunk(graph, 20, 0);
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

TEST(TimingPlanTest, LongLoopsReuseABoundedEventPoolChunkByChunk) {
  const TimingOptions back_to_back;
  const int iters = 2500;
  EXPECT_EQ(EventPoolSize(back_to_back, iters), kMaxEventsPerChunk);
  const int chunks = TimedChunkCount(back_to_back, iters);
  ASSERT_EQ(chunks, 3);  // 1023 + 1023 + 454
  int calls = 0, samples = 0;
  for (int c = 0; c < chunks; ++c) {
    const TimedChunk chunk = PlanTimedChunk(back_to_back, iters, c);
    EXPECT_LE(chunk.events, EventPoolSize(back_to_back, iters));
    EXPECT_EQ(chunk.steps.back().kind, Kind::kWaitForStream);
    calls += CountKind(chunk, Kind::kCollective);
    samples += static_cast<int>(chunk.intervals.size());
  }
  EXPECT_EQ(calls, iters);
  EXPECT_EQ(samples, iters);
  EXPECT_EQ(PlanTimedChunk(back_to_back, iters, 2).events, 455);
  EXPECT_THROW(PlanTimedChunk(back_to_back, iters, 3), std::out_of_range);

  TimingOptions blocking;
  blocking.blocking = true;
  EXPECT_EQ(EventPoolSize(blocking, iters), kMaxEventsPerChunk);
  EXPECT_EQ(TimedChunkCount(blocking, iters), 5);  // 512 per chunk
}

TEST(TimingPlanTest, WithoutPerIterationEventsOneSpanCoversAllCalls) {
  TimingOptions span;
  span.per_iteration_events = false;
  ASSERT_EQ(TimedChunkCount(span, 5000), 1);
  EXPECT_EQ(EventPoolSize(span, 5000), 2);
  const TimedChunk chunk = PlanTimedChunk(span, 5000, 0);
  EXPECT_EQ(CountKind(chunk, Kind::kRecordEvent), 2);
  EXPECT_EQ(CountKind(chunk, Kind::kCollective), 5000);
  EXPECT_EQ(CountKind(chunk, Kind::kWaitForStream), 1);
  EXPECT_EQ(chunk.steps.front(), (StreamStep{Kind::kRecordEvent, 0}));
  EXPECT_EQ(chunk.steps.back().kind, Kind::kWaitForStream);
  const std::vector<TimedInterval> intervals = {{0, 1, 5000}};
  EXPECT_EQ(chunk.intervals, intervals);
  EXPECT_NEAR(IntervalTimesUs(chunk, {0.0, 25.0})[0], 5.0, 1e-9);
  // With a graph: one span over all launches, each holding every call.
  span.graph_launches = 4;
  const TimedChunk graph = PlanTimedChunk(span, 10, 0);
  EXPECT_EQ(CountKind(graph, Kind::kGraphLaunch), 4);
  EXPECT_EQ(graph.intervals, (std::vector<TimedInterval>{{0, 1, 40}}));
}

TEST(TimingPlanTest, TooFewEventTimesIsAnError) {
  const TimedChunk chunk = PlanTimedChunk(TimingOptions{}, 3, 0);
  EXPECT_THROW(IntervalTimesUs(chunk, {0.0, 1.0}), std::invalid_argument);
}

TEST(TimingPlanTest, NoIterationsPlanNothing) {
  EXPECT_EQ(TimedChunkCount(TimingOptions{}, 0), 0);
  EXPECT_EQ(EventPoolSize(TimingOptions{}, 0), 0);
}

}  // namespace
}  // namespace fabtrack::harness
