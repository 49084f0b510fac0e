// What the verdict and the planner share: each probe graded against the
// healthy reference, and the hypotheses (a node, a leaf's uplink) with the
// probes on their path.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/locate.h"

namespace fabtrack::analyzer {

// Probes are graded against references of their own kind, so that the
// fabric's structure is not mistaken for a fault: a probe across leaves
// passes more hops (on the netns fabric an extra veth and bridge, streaming
// at 0.4-0.7x of a pair inside one leaf) and is compared with probes across
// leaves, a probe inside a leaf with probes inside leaves. Without a
// topology (or with a member not placed on a leaf) every probe is `kFlat`.
// Cross-leaf probes of both directions share one reference: a fault in one
// direction of an uplink slows every probe of that direction on two leaves,
// and only the other direction tells it from the structure.
enum class ProbeClass { kFlat, kIntraLeaf, kCrossLeaf };
ProbeClass ClassOf(const LocateTopology& topology, const LocateProbe& probe);

// A probe is slow when it is both far from the reference in units of the
// healthy spread and far in plain ratio (a quiet fabric has a tiny spread,
// and 4 MADs of 0.5% is not a fault anyone would chase), or gross (below).
constexpr double kSlowZ = 4.0;
constexpr double kSlowBusbwRatio = 0.8;     // below 80% of the reference
constexpr double kSlowLatencyRatio = 1.35;  // above 135% of it

// The healthy reference of a class is taken only from its probes that touch
// no suspect (`healthy` probes below): a fault slows its own probes, and
// counted in, they widen the spread until nothing is far from the reference
// any more (a node throttled 30x on 8 nodes put half the probes of its class
// into the spread: 41-45% of the reference, and no probe could be 4 spreads
// below it). The estimate is iterated: a robust reference from every probe,
// the probes that touch a suspect set aside, the reference again from the
// rest, until the set stops changing.
struct ClassReference {
  double busbw = 0, busbw_scale = 0;
  double latency = 0, latency_scale = 0;
  double busbw_median = 0, latency_median = 0;  // of the healthy probes
  int probes = 0;
  int pairs = 0;           // distinct member sets among them
  int healthy_pairs = 0;   // distinct member sets among the probes the reference rests on
  int possible_pairs = 0;  // how many pairs of this class the topology has
};

// A reference is trusted only when it rests on this many distinct pairs (or
// on every pair the class has): on 8 nodes in 2 leaves the first round has
// two pairs across leaves, and a fault on one and a burst of other work on
// the other make "slow" the reference itself, so nothing looks slow. Of
// them at least kMinHealthyPairs must touch no suspect (unless every pair of
// the class has been measured).
constexpr int kMinReferencePairs = 4;
constexpr int kMinHealthyPairs = 2;
bool ThinReference(const ClassReference& reference);
// How many more distinct pairs of the class its reference needs (0: enough).
int MissingReferencePairs(const ClassReference& reference);

// A probe this many times slower than its class's healthy median (bandwidth
// below a third, or latency above three times) is slow whatever the spread:
// gross. It must be seen again in a later round before it convicts anything
// (a suspect's evidence spans two rounds), and it is cleared only by two later
// measurements of the same pair at healthy speed.
constexpr double kGrossFactor = 3.0;

struct GradedProbe {
  const LocateProbe* probe = nullptr;
  ProbeClass kind = ProbeClass::kFlat;
  double busbw_reference = 0, latency_reference = 0;  // of its class
  double busbw_z = 0;    // how far below the reference (positive: slower)
  double latency_z = 0;  // how far above it (positive: slower)
  bool slow_busbw = false, slow_latency = false;
  bool gross = false;   // kGrossFactor off the class's healthy median (and so slow)
  double slowdown = 1;  // how many times slower than the reference (the worse of the two)
  // Slow, but the same probe (same members, same direction) measured in a
  // later round was not (twice, when it was gross): a fluke (a burst of other
  // work on a shared CPU), neither slow nor healthy evidence.
  bool refuted = false;
  // Part of its class's healthy reference: touches no suspect.
  bool healthy = false;
  bool slow() const { return slow_busbw || slow_latency; }
};

struct Grading {
  std::vector<GradedProbe> probes;
  std::map<ProbeClass, ClassReference> references;
  // The largest relative spread (scale / reference) over the classes.
  double busbw_spread = 0, latency_spread = 0;
};

// The score of a slow probe: its robust z, at least 2 * the slow threshold
// when it is gross (a probe 30x slow is certain even when the spread is so
// wide that its z is small).
double Strength(const GradedProbe& probe);

Grading GradeProbes(const LocateTopology& topology, const std::vector<LocateProbe>& probes);

// Whether some class of probes has a thin reference (ThinReference).
bool AnyThinReference(const Grading& grading);

// An uplink fault is either in both directions of the leaf's uplink (a bad
// cable, a flapping port) or only in the direction from the leaf toward its
// spine (`outbound`: a congested or mis-shaped egress port). The second is
// a hypothesis only when some probe is one-way: it lies on a one-way probe
// iff the sender is in the leaf and the receiver outside it. (A fault only
// toward the leaf is not a hypothesis of its own: on two leaves it is the
// other leaf's outbound fault, which no pair test can tell from it.)
struct Hypothesis {
  std::string kind;       // "node" | "uplink"
  int node = -1;          // kind node
  std::string leaf;       // kind uplink
  bool outbound = false;  // kind uplink: only the leaf -> spine direction
  std::string Name(const LocateTopology& topology) const;
  bool OnPath(const LocateTopology& topology, const LocateProbe& probe) const;
  // The same, with every node's leaf looked up before (LeavesByNode): the
  // loops over every uplink and every probe ask it millions of times.
  bool OnPath(const std::vector<const std::string*>& leaves, const LocateProbe& probe) const;
};

// Each node's leaf by node index (nullptr: on none), for Hypothesis::OnPath.
std::vector<const std::string*> LeavesByNode(const LocateTopology& topology);

// Every hypothesis the topology allows: each node, and each leaf's uplink
// (with one-way probes also each uplink's outbound direction).
std::vector<Hypothesis> AllHypotheses(const LocateTopology& topology, bool one_way);

// Consistent (every probe on its path that is not refuted is slow) with at
// least one slow probe.
std::vector<Hypothesis> ConsistentSuspects(const LocateTopology& topology, const Grading& grading);

}  // namespace fabtrack::analyzer
