#include "collector/harness/timing_plan.h"

#include <algorithm>
#include <stdexcept>

namespace fabtrack::harness {
namespace {

bool GraphMode(const TimingOptions& o) { return o.graph_launches > 0; }

// What one timed unit is: a collective, or a launch of the captured graph
// that holds `iters` of them.
int Units(const TimingOptions& o, int iters) { return GraphMode(o) ? o.graph_launches : iters; }

// Without per-iteration events a back-to-back chunk is one interval, so it
// needs two events whatever its length.
bool SpanOnly(const TimingOptions& o) { return !o.per_iteration_events && !o.blocking; }

int UnitsPerChunk(const TimingOptions& o) {
  if (SpanOnly(o)) return 1 << 30;
  // Back to back: events shared between neighbours (n units, n + 1 events).
  // Blocking: a start and a stop event per unit, the wait in between.
  return o.blocking ? kMaxEventsPerChunk / 2 : kMaxEventsPerChunk - 1;
}

}  // namespace

std::vector<StreamStep> GraphCapture(const TimingOptions& o, int iters) {
  if (!GraphMode(o)) return {};
  return std::vector<StreamStep>(static_cast<size_t>(std::max(iters, 0)),
                                 {StreamStep::Kind::kCollective, 0});
}

int TimedChunkCount(const TimingOptions& o, int iters) {
  const int units = Units(o, iters);
  if (units <= 0) return 0;
  const int per_chunk = UnitsPerChunk(o);
  return (units + per_chunk - 1) / per_chunk;
}

int EventPoolSize(const TimingOptions& o, int iters) {
  const int units = std::min(Units(o, iters), UnitsPerChunk(o));
  if (units <= 0) return 0;
  if (SpanOnly(o)) return 2;
  return o.blocking ? 2 * units : units + 1;
}

TimedChunk PlanTimedChunk(const TimingOptions& o, int iters, int chunk) {
  const int count = TimedChunkCount(o, iters);
  if (chunk < 0 || chunk >= count) throw std::out_of_range("PlanTimedChunk: no such chunk");
  const int per_chunk = UnitsPerChunk(o);
  const int first = chunk * per_chunk;
  const int units = std::min(per_chunk, Units(o, iters) - first);
  const StreamStep unit = GraphMode(o) ? StreamStep{StreamStep::Kind::kGraphLaunch, 0}
                                       : StreamStep{StreamStep::Kind::kCollective, 0};
  const int calls = GraphMode(o) ? iters : 1;
  using Kind = StreamStep::Kind;

  TimedChunk plan;
  if (o.blocking) {
    for (int u = 0; u < units; ++u) {
      plan.steps.push_back({Kind::kRecordEvent, 2 * u});
      plan.steps.push_back(unit);
      plan.steps.push_back({Kind::kRecordEvent, 2 * u + 1});
      plan.steps.push_back({Kind::kWaitForStream, 0});
      plan.intervals.push_back({2 * u, 2 * u + 1, calls});
    }
    plan.events = 2 * units;
  } else if (SpanOnly(o)) {
    plan.steps.push_back({Kind::kRecordEvent, 0});
    plan.steps.insert(plan.steps.end(), static_cast<size_t>(units), unit);
    plan.steps.push_back({Kind::kRecordEvent, 1});
    plan.steps.push_back({Kind::kWaitForStream, 0});
    plan.intervals.push_back({0, 1, units * calls});
    plan.events = 2;
  } else {
    for (int u = 0; u < units; ++u) {
      plan.steps.push_back({Kind::kRecordEvent, u});
      plan.steps.push_back(unit);
      plan.intervals.push_back({u, u + 1, calls});
    }
    plan.steps.push_back({Kind::kRecordEvent, units});
    plan.steps.push_back({Kind::kWaitForStream, 0});
    plan.events = units + 1;
  }
  return plan;
}

std::vector<double> IntervalTimesUs(const TimedChunk& chunk, const std::vector<double>& event_ms) {
  if (static_cast<int>(event_ms.size()) < chunk.events) {
    throw std::invalid_argument("IntervalTimesUs: fewer event times than the chunk's events");
  }
  std::vector<double> samples;
  samples.reserve(chunk.intervals.size());
  for (const TimedInterval& i : chunk.intervals) {
    const double ms =
        event_ms[static_cast<size_t>(i.stop_event)] - event_ms[static_cast<size_t>(i.start_event)];
    samples.push_back(ms * 1e3 / std::max(i.calls, 1));
  }
  return samples;
}

}  // namespace fabtrack::harness
