#include "collector/harness/timing_plan.h"

#include <algorithm>
#include <stdexcept>

namespace fabtrack::harness {
namespace {

using Kind = StreamStep::Kind;

bool GraphMode(const TimingOptions& o) { return o.graph_launches > 0; }

// What one timed unit is: a collective, or a launch of the captured graph
// that holds `iters` of them.
int Units(const TimingOptions& o, int iters) { return GraphMode(o) ? o.graph_launches : iters; }
StreamStep Unit(const TimingOptions& o) {
  return GraphMode(o) ? StreamStep{Kind::kGraphLaunch, 0} : StreamStep{Kind::kCollective, 0};
}
int CallsPerUnit(const TimingOptions& o, int iters) { return GraphMode(o) ? iters : 1; }

bool SamplesWanted(const TimingOptions& o) { return o.blocking || o.per_iteration_events; }

int UnitsPerSampleChunk(const TimingOptions& o) {
  // Back to back: events shared between neighbours (n units, n + 1 events).
  // Blocking: a start and a stop event per unit, the wait in between.
  return o.blocking ? kMaxEventsPerChunk / 2 : kMaxEventsPerChunk - 1;
}

}  // namespace

std::vector<StreamStep> GraphCapture(const TimingOptions& o, int iters) {
  if (!GraphMode(o)) return {};
  return std::vector<StreamStep>(static_cast<size_t>(std::max(iters, 0)), {Kind::kCollective, 0});
}

std::optional<TimedChunk> PlanMeanLoop(const TimingOptions& o, int iters) {
  const int units = Units(o, iters);
  if (o.blocking || units <= 0) return std::nullopt;
  TimedChunk plan;
  plan.steps.push_back({Kind::kRecordEvent, 0});
  plan.steps.insert(plan.steps.end(), static_cast<size_t>(units), Unit(o));
  plan.steps.push_back({Kind::kRecordEvent, 1});
  plan.steps.push_back({Kind::kWaitForStream, 0});
  plan.intervals.push_back({0, 1, units * CallsPerUnit(o, iters)});
  plan.events = 2;
  return plan;
}

int SampleChunkCount(const TimingOptions& o, int iters) {
  const int units = Units(o, iters);
  if (!SamplesWanted(o) || units <= 0) return 0;
  const int per_chunk = UnitsPerSampleChunk(o);
  return (units + per_chunk - 1) / per_chunk;
}

int EventPoolSize(const TimingOptions& o, int iters) {
  const int units = Units(o, iters);
  if (units <= 0) return 0;
  int pool = o.blocking ? 0 : 2;  // the mean loop's pair
  if (SamplesWanted(o)) {
    const int per_chunk = std::min(units, UnitsPerSampleChunk(o));
    pool = std::max(pool, o.blocking ? 2 * per_chunk : per_chunk + 1);
  }
  return pool;
}

TimedChunk PlanSampleChunk(const TimingOptions& o, int iters, int chunk) {
  if (chunk < 0 || chunk >= SampleChunkCount(o, iters)) {
    throw std::out_of_range("PlanSampleChunk: no such chunk");
  }
  const int per_chunk = UnitsPerSampleChunk(o);
  const int units = std::min(per_chunk, Units(o, iters) - chunk * per_chunk);
  const StreamStep unit = Unit(o);
  const int calls = CallsPerUnit(o, iters);

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
