// fabtrack-pairprobe: one round of `fabtrack locate`'s point-to-point
// probes, every pair at once, one rank per node. For each pair a:b it
// measures large-message bandwidth one way, a -> b and then b -> a (the
// sender streams messages of `bytes` for --stream-ms, then a stop; the
// receiver answers with the bytes it got; best of `reps`), and small-message latency
// (half the mean round trip of `latency_iters` 8-byte ping-pongs, the best
// of `reps`: a mean, so a node whose CPU is taken for milliseconds at a
// time shows where a median would not; the best of a few, so that a stray
// stall of a shared machine does not). With --one-at-a-time the pairs are
// measured one after another while the other ranks sleep (nodes that share
// CPUs, as scripts/netns-fabric.sh's; a real fabric measures all at once).
// Phases are separated by barriers of all ranks, so no pair measures its
// latency while another streams. Rank 0 writes the result file.
//
// This header is the program's pure side: the pair list and the result
// file, read by app/locate_flow.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack::harness {

struct ProbePair {
  std::string a, b;
};

// "a:b,c:d" -> {{a,b},{c,d}}; nullopt when malformed, a pair names one host
// twice, or a host is in two pairs.
std::optional<std::vector<ProbePair>> ParseProbePairs(const std::string& text);
std::string FormatProbePairs(const std::vector<ProbePair>& pairs);

// One direction of one pair.
struct OneWayProbe {
  std::string from, to;
  double busbw_gbps = 0;  // bytes moved from -> to per second / 1e9
  double latency_us = 0;  // half the pair's mean 8-byte round trip
  bool operator==(const OneWayProbe&) const = default;
};

struct PairProbeResults {
  int64_t bytes = 0;
  int iters = 0;  // the stream's milliseconds per measurement
  std::vector<OneWayProbe> probes;
  bool operator==(const PairProbeResults&) const = default;
};

std::string PairProbeResultsToJson(const PairProbeResults& results);
// nullopt (and `why`) when the text is not a result file.
std::optional<PairProbeResults> PairProbeResultsFromJson(const std::string& text, std::string* why);

// A host as the node calls itself (MPI_Get_processor_name) matches a name
// in the pair list exactly or by its first label ("gpu-a01.cluster" and
// "gpu-a01").
bool SameHost(const std::string& a, const std::string& b);

}  // namespace fabtrack::harness
