#include "analyzer/locate/locate_evidence.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/statistics.h"

namespace fabtrack::analyzer {
namespace {

// A probe is slow only when it is both far from the reference in units of
// the healthy spread and far in plain ratio: a quiet fabric has a tiny
// spread, and 4 MADs of 0.5% is not a fault anyone would chase.
constexpr double kSlowZ = 4.0;
constexpr double kSlowBusbwRatio = 0.8;     // below 80% of the reference
constexpr double kSlowLatencyRatio = 1.35;  // above 135% of it
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

}  // namespace

bool ThinReference(const ClassReference& reference) {
  return reference.pairs < std::min(kMinReferencePairs, reference.possible_pairs);
}

bool AnyThinReference(const Grading& grading) {
  return std::any_of(grading.references.begin(), grading.references.end(),
                     [](const auto& entry) { return ThinReference(entry.second); });
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
  std::map<ProbeClass, std::vector<double>> busbw, latency;
  std::map<ProbeClass, std::set<std::vector<int>>> pairs;
  for (const LocateProbe& p : probes) {
    const ProbeClass kind = ClassOf(topology, p);
    busbw[kind].push_back(p.busbw_gbps);
    latency[kind].push_back(p.small_latency_us);
    std::vector<int> members = p.members;
    std::sort(members.begin(), members.end());
    pairs[kind].insert(members);
  }
  const std::map<ProbeClass, int> possible = PossiblePairs(topology);
  for (const auto& [kind, values] : busbw) {
    ClassReference& r = g.references[kind];
    r.probes = static_cast<int>(values.size());
    r.pairs = static_cast<int>(pairs[kind].size());
    auto it = possible.find(kind);
    r.possible_pairs = it == possible.end() ? r.pairs : it->second;
    Reference(values, true, &r.busbw, &r.busbw_scale);
    Reference(latency[kind], false, &r.latency, &r.latency_scale);
  }
  if (g.references.count(ProbeClass::kCrossLeaf) && g.references.count(ProbeClass::kIntraLeaf)) {
    const ClassReference& intra = g.references[ProbeClass::kIntraLeaf];
    ClassReference& cross = g.references[ProbeClass::kCrossLeaf];
    cross.busbw = std::max(cross.busbw, kCrossLeafBusbwFloor * intra.busbw);
    cross.latency = std::min(cross.latency, kCrossLeafLatencyCeiling * intra.latency);
  }
  for (auto& [kind, r] : g.references) {
    r.busbw_scale = std::max(r.busbw_scale, kBusbwScaleFloor * std::abs(r.busbw));
    r.latency_scale = std::max(r.latency_scale, kLatencyScaleFloor * std::abs(r.latency));
    if (r.busbw > 0) g.busbw_spread = std::max(g.busbw_spread, r.busbw_scale / r.busbw);
    if (r.latency > 0) g.latency_spread = std::max(g.latency_spread, r.latency_scale / r.latency);
  }
  for (const LocateProbe& p : probes) {
    GradedProbe gp;
    gp.probe = &p;
    gp.kind = ClassOf(topology, p);
    const ClassReference& r = g.references.at(gp.kind);
    gp.busbw_reference = r.busbw;
    gp.latency_reference = r.latency;
    if (r.busbw_scale > 0) gp.busbw_z = (r.busbw - p.busbw_gbps) / r.busbw_scale;
    if (r.latency_scale > 0) gp.latency_z = (p.small_latency_us - r.latency) / r.latency_scale;
    gp.slow_busbw = gp.busbw_z > kSlowZ && p.busbw_gbps < kSlowBusbwRatio * r.busbw;
    gp.slow_latency = gp.latency_z > kSlowZ && p.small_latency_us > kSlowLatencyRatio * r.latency;
    g.probes.push_back(gp);
  }
  // A slow probe measured again later (same members, same direction) and
  // not slow then was a fluke.
  std::vector<bool> refuted(g.probes.size(), false);
  for (size_t i = 0; i < g.probes.size(); ++i) {
    if (!g.probes[i].slow()) continue;
    for (size_t j = 0; j < g.probes.size(); ++j) {
      const LocateProbe &a = *g.probes[i].probe, &b = *g.probes[j].probe;
      if (b.round > a.round && b.members == a.members && b.one_way == a.one_way &&
          !g.probes[j].slow()) {
        refuted[i] = true;
        break;
      }
    }
  }
  for (size_t i = 0; i < g.probes.size(); ++i) {
    if (!refuted[i]) continue;
    g.probes[i].refuted = true;
    g.probes[i].slow_busbw = g.probes[i].slow_latency = false;
  }
  return g;
}

std::string Hypothesis::Name(const LocateTopology& topology) const {
  if (kind == "node") return topology.nodes[node];
  return leaf + "-" + topology.spine_of.at(leaf);
}

bool Hypothesis::OnPath(const LocateTopology& topology, const LocateProbe& probe) const {
  if (kind == "node") {
    return std::find(probe.members.begin(), probe.members.end(), node) != probe.members.end();
  }
  auto in_leaf = [&](int m) {
    auto it = topology.leaf_of.find(topology.nodes[m]);
    return it != topology.leaf_of.end() && it->second == leaf;
  };
  if (probe.one_way && probe.members.size() == 2) {
    const bool sender = in_leaf(probe.members[0]), receiver = in_leaf(probe.members[1]);
    return outbound ? sender && !receiver : sender != receiver;
  }
  bool inside = false, outside = false;
  for (int m : probe.members) (in_leaf(m) ? inside : outside) = true;
  return inside && outside;
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
  for (const Hypothesis& h : AllHypotheses(topology, one_way)) {
    int on_path = 0;
    bool consistent = true;
    for (const GradedProbe& gp : grading.probes) {
      if (gp.refuted || !h.OnPath(topology, *gp.probe)) continue;
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
