#include "analyzer/locate/locate_evidence.h"

#include <algorithm>

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

// The reference is taken from the healthy side of the sample (faults only
// lower bandwidth and raise latency), so that a fault on half the probes of
// a small fabric does not drag it: the upper quartile of bandwidth, the
// lower quartile of latency; the spread is the scaled MAD of that half.
void Reference(std::vector<double> values, bool high_is_healthy, double floor, double* reference,
               double* scale) {
  std::sort(values.begin(), values.end());
  if (!high_is_healthy) std::reverse(values.begin(), values.end());
  std::vector<double> healthy(values.begin() + values.size() / 2, values.end());
  *reference = stats::Quantile(values, high_is_healthy ? 0.75 : 0.25).value_or(0);
  *scale = std::max(stats::ScaledMad(healthy).value_or(0), floor * std::abs(*reference));
}

}  // namespace

Grading GradeProbes(const std::vector<LocateProbe>& probes) {
  Grading g;
  if (probes.empty()) return g;
  std::vector<double> busbw, latency;
  for (const LocateProbe& p : probes) {
    busbw.push_back(p.busbw_gbps);
    latency.push_back(p.small_latency_us);
  }
  Reference(busbw, true, kBusbwScaleFloor, &g.busbw_reference, &g.busbw_scale);
  Reference(latency, false, kLatencyScaleFloor, &g.latency_reference, &g.latency_scale);
  for (const LocateProbe& p : probes) {
    GradedProbe gp;
    gp.probe = &p;
    if (g.busbw_scale > 0) gp.busbw_z = (g.busbw_reference - p.busbw_gbps) / g.busbw_scale;
    if (g.latency_scale > 0) {
      gp.latency_z = (p.small_latency_us - g.latency_reference) / g.latency_scale;
    }
    gp.slow_busbw = gp.busbw_z > kSlowZ && p.busbw_gbps < kSlowBusbwRatio * g.busbw_reference;
    gp.slow_latency =
        gp.latency_z > kSlowZ && p.small_latency_us > kSlowLatencyRatio * g.latency_reference;
    g.probes.push_back(gp);
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
      if (!h.OnPath(topology, *gp.probe)) continue;
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
