#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/locate/locate.h"
#include "analyzer/locate/locate_evidence.h"

namespace fabtrack::analyzer {
namespace {

std::string ProbeName(const LocateTopology& topology, const LocateProbe& probe) {
  std::string name;
  const char* between = probe.one_way ? "->" : "<->";
  for (int m : probe.members) name += (name.empty() ? "" : between) + topology.nodes[m];
  return name;
}

std::string Describe(const LocateTopology& topology, const GradedProbe& gp) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%s (round %d): busbw %.3g GB/s (healthy %.3g), small-message latency %.3g us "
                "(healthy %.3g)",
                ProbeName(topology, *gp.probe).c_str(), gp.probe->round, gp.probe->busbw_gbps,
                gp.busbw_reference, gp.probe->small_latency_us, gp.latency_reference);
  std::string out = text;
  if (gp.kind == ProbeClass::kCrossLeaf) out += ", against probes across leaves";
  return out;
}

// A suspect is convicted by repeated evidence only: slow probes on its path
// from at least two measurements (two pairs, or one pair in two rounds), so
// that one burst of other work on a node does not convict anything. Slow in
// small-message latency only, it needs three, and a node three different
// partners: bursts of latency come and go on a shared machine, and two in a
// row on one node's or one pair's probes are not rare among thousands.
constexpr size_t kMeasurements = 2, kLatencyOnlyMeasurements = 3;

bool Confirmed(const std::vector<const GradedProbe*>& convicting, int node) {
  std::set<std::pair<int, std::vector<int>>> measurements;
  std::set<std::vector<int>> partners;
  bool busbw = false;
  for (const GradedProbe* gp : convicting) {
    std::vector<int> members = gp->probe->members;
    std::sort(members.begin(), members.end());
    measurements.insert({gp->probe->round, members});
    std::erase(members, node);
    partners.insert(members);
    busbw |= gp->slow_busbw;
  }
  if (busbw) return measurements.size() >= kMeasurements;
  return measurements.size() >= kLatencyOnlyMeasurements &&
         (node < 0 || partners.size() >= kLatencyOnlyMeasurements);
}

constexpr char kUnconfirmed[] =
    "not confirmed yet: to be measured again, with other partners, before it is convicted";

LocateSuspect SuspectOf(const LocateTopology& topology, const Grading& g, const Hypothesis& h,
                        bool* confirmed) {
  LocateSuspect s;
  s.kind = h.kind;
  s.name = h.Name(topology);
  std::vector<const GradedProbe*> convicting;
  bool busbw = false, latency = false;
  double z_sum = 0;
  for (const GradedProbe& gp : g.probes) {
    if (!gp.slow() || !h.OnPath(topology, *gp.probe)) continue;
    convicting.push_back(&gp);
    busbw |= gp.slow_busbw;
    latency |= gp.slow_latency;
    z_sum += std::max(gp.busbw_z, gp.latency_z);
  }
  s.score = convicting.empty() ? 0 : z_sum / convicting.size();
  *confirmed = Confirmed(convicting, h.kind == "node" ? h.node : -1);
  if (!*confirmed) s.evidence.push_back(kUnconfirmed);
  if (h.outbound) {
    const std::string spine = topology.spine_of.at(h.leaf);
    s.evidence.push_back("one direction only, " + h.leaf + " toward " + spine +
                         ": probes sent out of " + h.leaf + " are slow, probes into it are not");
  }
  if (latency && !busbw) {
    s.evidence.push_back(
        "slow in small-message latency only, bandwidth intact: a busy or starved CPU, "
        "interrupts, or the socket path rather than the wire");
  }
  std::sort(convicting.begin(), convicting.end(), [](const GradedProbe* a, const GradedProbe* b) {
    return std::max(a->busbw_z, a->latency_z) > std::max(b->busbw_z, b->latency_z);
  });
  for (size_t i = 0; i < convicting.size() && i < 4; ++i) {
    s.evidence.push_back(Describe(topology, *convicting[i]));
  }
  return s;
}

bool Covers(const LocateTopology& topology, const Hypothesis& h, const GradedProbe& gp) {
  return h.OnPath(topology, *gp.probe);
}

}  // namespace

LocateVerdict JudgeLocate(const LocateTopology& topology, const std::vector<LocateProbe>& probes) {
  LocateVerdict verdict;
  for (const LocateProbe& p : probes) verdict.rounds = std::max(verdict.rounds, p.round);
  if (probes.empty()) return verdict;
  const Grading g = GradeProbes(topology, probes);
  verdict.busbw_spread = g.busbw_spread;
  verdict.latency_spread = g.latency_spread;

  std::vector<const GradedProbe*> slow;
  std::set<int> measured;
  for (const GradedProbe& gp : g.probes) {
    if (gp.slow()) slow.push_back(&gp);
    measured.insert(gp.probe->members.begin(), gp.probe->members.end());
  }
  if (slow.empty()) {
    // Nothing slow: settled once every node has been in a probe and every
    // class's reference rests on enough pairs.
    verdict.settled = measured.size() == topology.nodes.size() && !AnyThinReference(g);
    return verdict;
  }
  const std::vector<Hypothesis> candidates = ConsistentSuspects(topology, g);
  std::vector<Hypothesis> covering;
  for (const Hypothesis& h : candidates) {
    if (std::all_of(slow.begin(), slow.end(),
                    [&](const GradedProbe* gp) { return Covers(topology, h, *gp); })) {
      covering.push_back(h);
    }
  }
  // Each suspect with whether repeated evidence confirms it.
  std::vector<std::pair<LocateSuspect, bool>> suspects;
  bool all_confirmed = true;
  auto suspect = [&](const Hypothesis& h) {
    bool confirmed = false;
    suspects.push_back({SuspectOf(topology, g, h, &confirmed), false});
    suspects.back().second = confirmed;
    all_confirmed &= confirmed;
  };
  if (!covering.empty()) {
    for (const Hypothesis& h : covering) suspect(h);
    verdict.settled = covering.size() == 1;
  } else {
    // No single explanation: more than one fault. Greedily take the
    // hypothesis that explains most of what is still unexplained; a tie at
    // any step leaves the verdict open for the planner to separate.
    std::vector<const GradedProbe*> left = slow;
    bool tie = false;
    while (!left.empty()) {
      const Hypothesis* best = nullptr;
      size_t best_count = 0;
      int best_ties = 0;
      for (const Hypothesis& h : candidates) {
        size_t count = std::count_if(left.begin(), left.end(), [&](const GradedProbe* gp) {
          return Covers(topology, h, *gp);
        });
        if (count > best_count) {
          best = &h;
          best_count = count;
          best_ties = 0;
        } else if (count == best_count && count > 0) {
          ++best_ties;
        }
      }
      if (!best) break;
      tie |= best_ties > 0;
      suspect(*best);
      std::erase_if(left, [&](const GradedProbe* gp) { return Covers(topology, *best, *gp); });
    }
    // A probe slow while each of its nodes is healthy elsewhere: the path
    // between them (a cable, a port of the switch), kind "link", named
    // once with every slow measurement of that pair in that direction.
    std::set<std::vector<int>> named;
    for (const GradedProbe* gp : left) {
      if (!named.insert(gp->probe->members).second) continue;
      std::vector<const GradedProbe*> same;
      for (const GradedProbe* other : left) {
        if (other->probe->members == gp->probe->members) same.push_back(other);
      }
      LocateSuspect s;
      s.kind = "link";
      s.name = ProbeName(topology, *gp->probe);
      for (const GradedProbe* other : same) {
        s.score = std::max(s.score, std::max(other->busbw_z, other->latency_z));
      }
      const bool confirmed = Confirmed(same, -1);
      all_confirmed &= confirmed;
      if (!confirmed) s.evidence.push_back(kUnconfirmed);
      for (const GradedProbe* other : same) s.evidence.push_back(Describe(topology, *other));
      suspects.push_back({s, confirmed});
    }
    verdict.settled = !tie;
  }
  verdict.settled &= all_confirmed && !AnyThinReference(g);
  // Confirmed suspects first (a fluke may score higher than a fault), then
  // by score.
  std::stable_sort(suspects.begin(), suspects.end(), [](const auto& a, const auto& b) {
    if (a.second != b.second) return a.second;
    return a.first.score > b.first.score;
  });
  for (auto& [s, confirmed] : suspects) verdict.suspects.push_back(std::move(s));
  return verdict;
}

}  // namespace fabtrack::analyzer
