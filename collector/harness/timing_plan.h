// How the timed iterations of one message size are put on a GPU stream and
// how times are read back. Pure: the NCCL backend carries a plan out on its
// CUDA stream; tests check plans without CUDA.
//
// The mean ("time", as nccl-tests prints it) comes from nccl-tests' method:
// the calls enqueued back to back with nothing between them and no host
// synchronisation, an event before the first and after the last; the GPU
// starts each call as soon as the previous one ends, and the host's launch
// cost overlaps the GPU's work. Measured on an H200 (NCCL 2.28.9, one rank),
// an event between calls is not free: it lifted the small-message mean by
// about 10% in fabtrack and 25-40% in nccl-tests' own -I 1, and even a 32 MiB
// call by 4%. So the per-call distribution (p50/p99/cv, stragglers) comes
// from a second loop of as many calls with an event between neighbours; its
// absolute times carry that event cost, its spread is the calls' own.
//
// Blocking mode (nccl-tests -z 1) waits for each call before launching the
// next: each time then holds one launch plus completion, the latency an
// application that synchronises after every collective sees; its mean is
// the mean of those per-call times.
//
// Graph mode (nccl-tests -G N) captures the timed calls into one CUDA graph
// and launches it N times: the mean is the span over all launches divided by
// the calls, each sample one launch's time divided by the calls it holds.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace fabtrack::harness {

struct TimingOptions {
  bool blocking = false;   // -z 1: synchronise after every call
  int graph_launches = 0;  // -G N: N > 0 launches a captured graph of the calls N times
  // -I 1 (default): also the loop with an event between calls, for the
  // per-call distribution; -I 0: the mean alone (one sample per size).
  bool per_iteration_events = true;
};

// One thing put on the stream (or into the graph being captured).
struct StreamStep {
  enum class Kind {
    kRecordEvent,   // record event `index` of the chunk's pool
    kCollective,    // one all-reduce
    kGraphLaunch,   // launch the captured graph
    kWaitForStream  // host waits until the stream has done everything so far
  };
  Kind kind = Kind::kCollective;
  int index = 0;

  bool operator==(const StreamStep&) const = default;
};

// A sample is the time between two events of a chunk's pool, divided by the
// calls in between.
struct TimedInterval {
  int start_event = 0;
  int stop_event = 0;
  int calls = 1;

  bool operator==(const TimedInterval&) const = default;
};

// Events are created once per pool and reused chunk after chunk: a chunk
// ends by waiting for the stream, after which its events are read and may
// be recorded again. So a million iterations need a thousand events, not a
// million, at the price of one wait per kMaxEventsPerChunk - 1 calls.
struct TimedChunk {
  std::vector<StreamStep> steps;  // in order; the last one is kWaitForStream
  std::vector<TimedInterval> intervals;
  int events = 0;  // pool size the chunk uses

  bool operator==(const TimedChunk&) const = default;
};

inline constexpr int kMaxEventsPerChunk = 1024;

// The calls to capture into the graph before the loops run (graph mode:
// `iters` collectives, no events: they would be replayed with the graph);
// empty otherwise.
std::vector<StreamStep> GraphCapture(const TimingOptions& options, int iters);

// The loop that gives the mean: one interval over all calls, nothing
// between them. nullopt in blocking mode (its mean is the samples').
std::optional<TimedChunk> PlanMeanLoop(const TimingOptions& options, int iters);

// The loop of per-call samples, chunk by chunk: how many chunks (0 when
// -I 0 outside blocking mode), and chunk `chunk` (0-based).
int SampleChunkCount(const TimingOptions& options, int iters);
TimedChunk PlanSampleChunk(const TimingOptions& options, int iters, int chunk);

// The events a pool needs for any loop of this plan.
int EventPoolSize(const TimingOptions& options, int iters);

// Per-sample microseconds of one chunk, from its events' times in ms
// (event_ms[i]: event i's time, any common origin). One sample per interval.
std::vector<double> IntervalTimesUs(const TimedChunk& chunk, const std::vector<double>& event_ms);

}  // namespace fabtrack::harness
