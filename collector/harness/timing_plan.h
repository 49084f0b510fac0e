// How the timed iterations of one message size are put on a GPU stream and
// how the per-iteration times are read back. Pure: the NCCL backend carries a
// plan out on its CUDA stream; tests check plans without CUDA.
//
// The default is nccl-tests' method: the timed calls are enqueued back to
// back with no host synchronisation between them, so the GPU starts each call
// as soon as the previous one ends and the host's launch cost overlaps the
// GPU's work instead of being added to every measurement. An event recorded
// between consecutive calls gives each call's time (its delta to the next
// event), and the mean of those deltas is nccl-tests' time per call.
//
// Blocking mode (nccl-tests -z 1) waits for each call before launching the
// next: each time then holds one launch plus completion, the latency an
// application that synchronises after every collective sees.
//
// Graph mode (nccl-tests -G N) captures the timed calls into one CUDA graph
// and launches it N times; each launch gives one sample, its time divided by
// the calls it holds.
#pragma once

#include <cstdint>
#include <vector>

namespace fabtrack::harness {

struct TimingOptions {
  bool blocking = false;   // -z 1: synchronise after every call
  int graph_launches = 0;  // -G N: N > 0 launches a captured graph of the calls N times
  // -I 0: back to back with events only around the whole loop (one sample:
  // the span over the calls), for when an event's host cost per call
  // matters; -I 1 (default): an event between neighbouring calls.
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

// The calls to capture into the graph before the chunks run (graph mode:
// `iters` collectives, no events: they would be replayed with the graph);
// empty otherwise.
std::vector<StreamStep> GraphCapture(const TimingOptions& options, int iters);

// How many chunks the timed loop of `iters` iterations takes, and chunk
// `chunk` (0-based) of it.
int TimedChunkCount(const TimingOptions& options, int iters);
TimedChunk PlanTimedChunk(const TimingOptions& options, int iters, int chunk);

// The events a pool needs for any chunk of this plan.
int EventPoolSize(const TimingOptions& options, int iters);

// Per-sample microseconds of one chunk, from its events' times in ms
// (event_ms[i]: event i's time, any common origin). One sample per interval.
std::vector<double> IntervalTimesUs(const TimedChunk& chunk, const std::vector<double>& event_ms);

}  // namespace fabtrack::harness
