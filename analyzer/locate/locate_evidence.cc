#include "analyzer/locate/locate_evidence.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/statistics.h"

namespace fabtrack::analyzer {
namespace {

// Floors of the healthy spread, relative to the reference: runs of one
// probe on a real fabric differ by a few percent at least.
constexpr double kBusbwScaleFloor = 0.03;
constexpr double kLatencyScaleFloor = 0.05;
// How far the fabric's structure alone may set cross-leaf probes apart from
// those inside a leaf: at least 45% of the bandwidth (the netns fabric
// shows 0.4-0.7x; a healthy class down to 0.36x passes the 0.8x test), at most four
// times the latency. The cross-leaf reference is held within these bounds
// of the intra-leaf one, so that a fault on every cross-leaf probe (an
// uplink of a two-leaf fabric) is not taken for the structure.
constexpr double kCrossLeafBusbwFloor = 0.45;
constexpr double kCrossLeafLatencyCeiling = 4.0;

// The reference is taken from the healthy side of the sample (faults only
// lower bandwidth and raise latency), so that a fault on half the probes of
// a small fabric does not drag it: the upper quartile of bandwidth, the
// lower quartile of latency; the spread is the scaled MAD of that half.
void Reference(std::vector<double> values, bool high_is_healthy, double* reference, double* scale) {
  std::sort(values.begin(), values.end());
  if (!high_is_healthy) std::reverse(values.begin(), values.end());
  std::vector<double> healthy(values.begin() + values.size() / 2, values.end());
  *reference = stats::Quantile(values, high_is_healthy ? 0.75 : 0.25).value_or(0);
  *scale = stats::ScaledMad(healthy).value_or(0);
}

std::string LeafOf(const LocateTopology& topology, int node) {
  auto it = topology.leaf_of.find(topology.nodes[node]);
  return it == topology.leaf_of.end() ? "" : it->second;
}

// How many pairs of each class the topology has: inside leaves, the pairs
// of each leaf; across, the rest; without leaves, every pair.
std::map<ProbeClass, int> PossiblePairs(const LocateTopology& topology) {
  const int n = static_cast<int>(topology.nodes.size());
  const int all = n * (n - 1) / 2;
  if (!topology.HasLeaves()) return {{ProbeClass::kFlat, all}};
  std::map<std::string, int> leaf_sizes;
  for (int i = 0; i < n; ++i) ++leaf_sizes[LeafOf(topology, i)];
  int intra = 0;
  for (const auto& [leaf, size] : leaf_sizes) intra += size * (size - 1) / 2;
  return {{ProbeClass::kIntraLeaf, intra}, {ProbeClass::kCrossLeaf, all - intra}};
}

// How many times the estimate of the healthy references is redone at most:
// it settles in two or three passes (the suspects' probes set aside, then
// the probes that only the tighter reference shows slow).
constexpr int kMaxReferencePasses = 6;

std::vector<int> SortedMembers(const LocateProbe& probe) {
  std::vector<int> members = probe.members;
  std::sort(members.begin(), members.end());
  return members;
}

// Each class's reference from the probes `use` marks; a class with fewer
// than two of them takes all its probes (the healthy side of them, as
// Reference does): when every pair across two leaves is slow, there is no
// healthy probe of that class, and the structure's bounds below decide.
std::map<ProbeClass, ClassReference> References(const LocateTopology& topology,
                                                const std::vector<LocateProbe>& probes,
                                                const std::vector<ProbeClass>& kinds,
                                                const std::vector<bool>& use) {
  struct Samples {
    std::vector<double> busbw, latency;
    std::set<std::vector<int>> pairs;
  };
  std::map<ProbeClass, Samples> all, healthy;
  for (size_t i = 0; i < probes.size(); ++i) {
    for (Samples* s : {&all[kinds[i]], use[i] ? &healthy[kinds[i]] : nullptr}) {
      if (!s) continue;
      s->busbw.push_back(probes[i].busbw_gbps);
      s->latency.push_back(probes[i].small_latency_us);
      s->pairs.insert(SortedMembers(probes[i]));
    }
  }
  const std::map<ProbeClass, int> possible = PossiblePairs(topology);
  std::map<ProbeClass, ClassReference> references;
  for (const auto& [kind, samples] : all) {
    ClassReference& r = references[kind];
    const Samples& clean = healthy[kind];
    const Samples& from = clean.busbw.size() >= 2 ? clean : samples;
    r.probes = static_cast<int>(samples.busbw.size());
    r.pairs = static_cast<int>(samples.pairs.size());
    r.healthy_pairs = static_cast<int>(clean.pairs.size());
    auto it = possible.find(kind);
    r.possible_pairs = it == possible.end() ? r.pairs : it->second;
    if (&from == &samples || clean.busbw.size() == samples.busbw.size()) {
      Reference(from.busbw, true, &r.busbw, &r.busbw_scale);
      Reference(from.latency, false, &r.latency, &r.latency_scale);
    } else {
      // The suspects' probes are already set aside: the rest is the healthy
      // sample itself, taken whole (its healthy side again would trim it
      // pass after pass, the reference climbing and the spread shrinking
      // until the noise of a clean fabric looked slow).
      r.busbw = stats::Median(from.busbw).value_or(0);
      r.busbw_scale = stats::ScaledMad(from.busbw).value_or(0);
      r.latency = stats::Median(from.latency).value_or(0);
      r.latency_scale = stats::ScaledMad(from.latency).value_or(0);
    }
    r.busbw_median = stats::Median(from.busbw).value_or(0);
    r.latency_median = stats::Median(from.latency).value_or(0);
  }
  if (references.count(ProbeClass::kCrossLeaf) && references.count(ProbeClass::kIntraLeaf)) {
    const ClassReference& intra = references[ProbeClass::kIntraLeaf];
    ClassReference& cross = references[ProbeClass::kCrossLeaf];
    cross.busbw = std::max(cross.busbw, kCrossLeafBusbwFloor * intra.busbw);
    cross.latency = std::min(cross.latency, kCrossLeafLatencyCeiling * intra.latency);
    cross.busbw_median = std::max(cross.busbw_median, kCrossLeafBusbwFloor * intra.busbw_median);
    cross.latency_median =
        std::min(cross.latency_median, kCrossLeafLatencyCeiling * intra.latency_median);
  }
  for (auto& [kind, r] : references) {
    r.busbw_scale = std::max(r.busbw_scale, kBusbwScaleFloor * std::abs(r.busbw));
    r.latency_scale = std::max(r.latency_scale, kLatencyScaleFloor * std::abs(r.latency));
  }
  return references;
}

// Every probe against its class's reference: z, slow, gross, and refuted
// when later measurements of the same pair in the same direction were not
// slow (one for a slow probe, two for a gross one).
std::vector<GradedProbe> GradeAgainst(const std::vector<LocateProbe>& probes,
                                      const std::vector<ProbeClass>& kinds,
                                      const std::map<ProbeClass, ClassReference>& references) {
  std::vector<GradedProbe> graded;
  for (size_t i = 0; i < probes.size(); ++i) {
    const LocateProbe& p = probes[i];
    GradedProbe gp;
    gp.probe = &p;
    gp.kind = kinds[i];
    const ClassReference& r = references.at(gp.kind);
    gp.busbw_reference = r.busbw;
    gp.latency_reference = r.latency;
    if (r.busbw_scale > 0) gp.busbw_z = (r.busbw - p.busbw_gbps) / r.busbw_scale;
    if (r.latency_scale > 0) gp.latency_z = (p.small_latency_us - r.latency) / r.latency_scale;
    gp.slow_busbw = gp.busbw_z > kSlowZ && p.busbw_gbps < kSlowBusbwRatio * r.busbw;
    gp.slow_latency = gp.latency_z > kSlowZ && p.small_latency_us > kSlowLatencyRatio * r.latency;
    const bool gross_busbw = r.busbw_median > 0 && p.busbw_gbps * kGrossFactor < r.busbw_median;
    const bool gross_latency =
        r.latency_median > 0 && p.small_latency_us > kGrossFactor * r.latency_median;
    gp.slow_busbw |= gross_busbw;
    gp.slow_latency |= gross_latency;
    gp.gross = gross_busbw || gross_latency;
    constexpr double kNoBandwidth = 1e6;
    const double busbw_slowdown =
        p.busbw_gbps > 0 ? r.busbw / p.busbw_gbps : (r.busbw > 0 ? kNoBandwidth : 1);
    const double latency_slowdown = r.latency > 0 ? p.small_latency_us / r.latency : 1;
    gp.slowdown = std::max({1.0, busbw_slowdown, latency_slowdown});
    graded.push_back(gp);
  }
  // The rounds in which each probe (members in order, one-way or not) was
  // measured not slow.
  std::map<std::pair<std::vector<int>, bool>, std::vector<int>> healthy_rounds;
  for (const GradedProbe& gp : graded) {
    if (!gp.slow())
      healthy_rounds[{gp.probe->members, gp.probe->one_way}].push_back(gp.probe->round);
  }
  std::vector<bool> refuted(graded.size(), false);
  for (size_t i = 0; i < graded.size(); ++i) {
    if (!graded[i].slow()) continue;
    const LocateProbe& a = *graded[i].probe;
    auto it = healthy_rounds.find({a.members, a.one_way});
    if (it == healthy_rounds.end()) continue;
    const auto healthy_again =
        std::count_if(it->second.begin(), it->second.end(), [&](int r) { return r > a.round; });
    refuted[i] = healthy_again >= (graded[i].gross ? 2 : 1);
  }
  for (size_t i = 0; i < graded.size(); ++i) {
    if (!refuted[i]) continue;
    graded[i].refuted = true;
    graded[i].slow_busbw = graded[i].slow_latency = false;
  }
  return graded;
}

// The probes that touch no suspect: not slow, not refuted (a fluke is not
// healthy either), not on the path of an uplink (or one direction of it)
// slow in more than half of its probes, and no member slow in more than
// half of its pairs. A faulty node's or uplink's probes that the current
// spread does not call slow go with the ones it does. Uplinks are taken
// most slow first, each judged on the probes the ones taken before do not
// explain: a slow uplink of three leaves makes about half the probes across
// a healthy one slow too (those shared with it), and they are its alone.
std::vector<bool> TouchingNoSuspect(const LocateTopology& topology,
                                    const std::vector<GradedProbe>& graded) {
  bool one_way = false;
  for (const GradedProbe& gp : graded) one_way |= gp.probe->one_way;
  std::vector<Hypothesis> uplinks;
  for (const Hypothesis& h : AllHypotheses(topology, one_way)) {
    if (h.kind == "uplink") uplinks.push_back(h);
  }
  const std::vector<const std::string*> leaves = LeavesByNode(topology);
  std::vector<bool> explained(graded.size(), false), taken(uplinks.size(), false);
  for (;;) {
    int worst = -1;
    double worst_share = 0.5;  // more than half
    for (size_t u = 0; u < uplinks.size(); ++u) {
      if (taken[u]) continue;
      int slow = 0, all = 0;
      for (size_t i = 0; i < graded.size(); ++i) {
        const GradedProbe& gp = graded[i];
        if (gp.refuted || explained[i] || !uplinks[u].OnPath(leaves, *gp.probe)) continue;
        slow += gp.slow();
        ++all;
      }
      if (all > 0 && static_cast<double>(slow) / all > worst_share) {
        worst = static_cast<int>(u);
        worst_share = static_cast<double>(slow) / all;
      }
    }
    if (worst < 0) break;
    taken[worst] = true;
    for (size_t i = 0; i < graded.size(); ++i) {
      explained[i] = explained[i] || uplinks[worst].OnPath(leaves, *graded[i].probe);
    }
  }
  // Nodes counted by partner, not by probe: a faulty node's partner
  // measured with it twice is not slow in most of its pairs.
  std::map<int, std::set<std::vector<int>>> slow_pairs, all_pairs;
  for (size_t i = 0; i < graded.size(); ++i) {
    const GradedProbe& gp = graded[i];
    if (gp.refuted || explained[i]) continue;
    const std::vector<int> pair = SortedMembers(*gp.probe);
    for (int m : pair) {
      if (gp.slow()) slow_pairs[m].insert(pair);
      all_pairs[m].insert(pair);
    }
  }
  std::set<int> suspect_nodes;
  for (const auto& [node, pairs] : all_pairs) {
    if (2 * slow_pairs[node].size() > pairs.size()) suspect_nodes.insert(node);
  }
  std::vector<bool> healthy(graded.size(), false);
  for (size_t i = 0; i < graded.size(); ++i) {
    const GradedProbe& gp = graded[i];
    if (gp.slow() || gp.refuted || explained[i]) continue;
    healthy[i] = std::none_of(gp.probe->members.begin(), gp.probe->members.end(),
                              [&](int m) { return suspect_nodes.count(m) > 0; });
  }
  return healthy;
}

}  // namespace

bool ThinReference(const ClassReference& reference) { return MissingReferencePairs(reference) > 0; }

int MissingReferencePairs(const ClassReference& r) {
  int missing = std::min(kMinReferencePairs, r.possible_pairs) - r.pairs;
  if (r.pairs < r.possible_pairs) {
    missing = std::max(missing, std::min(kMinHealthyPairs, r.possible_pairs) - r.healthy_pairs);
  }
  return std::max(missing, 0);
}

bool AnyThinReference(const Grading& grading) {
  return std::any_of(grading.references.begin(), grading.references.end(),
                     [](const auto& entry) { return ThinReference(entry.second); });
}

double Strength(const GradedProbe& probe) {
  const double z = std::max(probe.busbw_z, probe.latency_z);
  return probe.gross ? std::max(z, 2 * kSlowZ) : z;
}

ProbeClass ClassOf(const LocateTopology& topology, const LocateProbe& probe) {
  std::set<std::string> leaves;
  for (int m : probe.members) {
    const std::string leaf = LeafOf(topology, m);
    if (leaf.empty()) return ProbeClass::kFlat;
    leaves.insert(leaf);
  }
  return leaves.size() > 1 ? ProbeClass::kCrossLeaf : ProbeClass::kIntraLeaf;
}

Grading GradeProbes(const LocateTopology& topology, const std::vector<LocateProbe>& probes) {
  Grading g;
  if (probes.empty()) return g;
  std::vector<ProbeClass> kinds;
  for (const LocateProbe& p : probes) kinds.push_back(ClassOf(topology, p));
  // First from every probe (the healthy side of each class), then from the
  // probes that touch no suspect, until that set stops changing.
  std::vector<bool> use(probes.size(), true);
  for (int pass = 0; pass < kMaxReferencePasses; ++pass) {
    g.references = References(topology, probes, kinds, use);
    g.probes = GradeAgainst(probes, kinds, g.references);
    for (size_t i = 0; i < probes.size(); ++i) g.probes[i].healthy = use[i];
    std::vector<bool> next = TouchingNoSuspect(topology, g.probes);
    if (next == use) break;
    use = std::move(next);
  }
  for (const auto& [kind, r] : g.references) {
    if (r.busbw > 0) g.busbw_spread = std::max(g.busbw_spread, r.busbw_scale / r.busbw);
    if (r.latency > 0) g.latency_spread = std::max(g.latency_spread, r.latency_scale / r.latency);
  }
  return g;
}

std::string Hypothesis::Name(const LocateTopology& topology) const {
  if (kind == "node") return topology.nodes[node];
  return leaf + "-" + topology.spine_of.at(leaf);
}

namespace {

// A hypothesis's path, whatever tells which members are in its leaf.
template <typename InLeaf>
bool OnPathOf(const Hypothesis& h, const LocateProbe& probe, InLeaf in_leaf) {
  if (h.kind == "node") {
    return std::find(probe.members.begin(), probe.members.end(), h.node) != probe.members.end();
  }
  if (probe.one_way && probe.members.size() == 2) {
    const bool sender = in_leaf(probe.members[0]), receiver = in_leaf(probe.members[1]);
    return h.outbound ? sender && !receiver : sender != receiver;
  }
  bool inside = false, outside = false;
  for (int m : probe.members) (in_leaf(m) ? inside : outside) = true;
  return inside && outside;
}

}  // namespace

bool Hypothesis::OnPath(const LocateTopology& topology, const LocateProbe& probe) const {
  return OnPathOf(*this, probe, [&](int m) {
    auto it = topology.leaf_of.find(topology.nodes[m]);
    return it != topology.leaf_of.end() && it->second == leaf;
  });
}

bool Hypothesis::OnPath(const std::vector<const std::string*>& leaves,
                        const LocateProbe& probe) const {
  return OnPathOf(*this, probe, [&](int m) { return leaves[m] && *leaves[m] == leaf; });
}

std::vector<const std::string*> LeavesByNode(const LocateTopology& topology) {
  std::vector<const std::string*> leaves(topology.nodes.size(), nullptr);
  for (size_t i = 0; i < topology.nodes.size(); ++i) {
    auto it = topology.leaf_of.find(topology.nodes[i]);
    if (it != topology.leaf_of.end()) leaves[i] = &it->second;
  }
  return leaves;
}

std::vector<Hypothesis> AllHypotheses(const LocateTopology& topology, bool one_way) {
  std::vector<Hypothesis> all;
  for (int i = 0; i < static_cast<int>(topology.nodes.size()); ++i) {
    all.push_back({"node", i, "", false});
  }
  for (const auto& [leaf, spine] : topology.spine_of) {
    all.push_back({"uplink", -1, leaf, false});
    if (one_way) all.push_back({"uplink", -1, leaf, true});
  }
  return all;
}

std::vector<Hypothesis> ConsistentSuspects(const LocateTopology& topology, const Grading& grading) {
  std::vector<Hypothesis> out;
  const bool one_way = std::any_of(grading.probes.begin(), grading.probes.end(),
                                   [](const GradedProbe& gp) { return gp.probe->one_way; });
  // A node is on the path of exactly the probes it is a member of: one pass
  // over the probes decides every node (thousands of nodes times thousands
  // of probes through OnPath made locate's judging quadratic).
  const size_t nodes = topology.nodes.size();
  std::vector<int> node_on_path(nodes, 0);
  std::vector<bool> node_consistent(nodes, true);
  for (const GradedProbe& gp : grading.probes) {
    if (gp.refuted) continue;
    for (int m : gp.probe->members) {
      if (m < 0 || static_cast<size_t>(m) >= nodes) continue;
      ++node_on_path[m];
      if (!gp.slow()) node_consistent[m] = false;
    }
  }
  const std::vector<const std::string*> leaves = LeavesByNode(topology);
  for (const Hypothesis& h : AllHypotheses(topology, one_way)) {
    if (h.kind == "node") {
      if (node_consistent[h.node] && node_on_path[h.node] > 0) out.push_back(h);
      continue;
    }
    int on_path = 0;
    bool consistent = true;
    for (const GradedProbe& gp : grading.probes) {
      if (gp.refuted || !h.OnPath(leaves, *gp.probe)) continue;
      ++on_path;
      if (!gp.slow()) {
        consistent = false;
        break;
      }
    }
    if (consistent && on_path > 0) out.push_back(h);
  }
  return out;
}

}  // namespace fabtrack::analyzer
