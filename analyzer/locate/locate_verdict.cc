#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

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

std::string Describe(const LocateTopology& topology, const Grading& g, const GradedProbe& gp) {
  char text[256];
  std::snprintf(text, sizeof text,
                "%s (round %d): busbw %.3g GB/s (healthy %.3g), small-message latency %.3g us "
                "(healthy %.3g)",
                ProbeName(topology, *gp.probe).c_str(), gp.probe->round, gp.probe->busbw_gbps,
                g.busbw_reference, gp.probe->small_latency_us, g.latency_reference);
  return text;
}

LocateSuspect SuspectOf(const LocateTopology& topology, const Grading& g, const Hypothesis& h) {
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
    s.evidence.push_back(Describe(topology, g, *convicting[i]));
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
  const Grading g = GradeProbes(probes);
  if (g.busbw_reference > 0) verdict.busbw_spread = g.busbw_scale / g.busbw_reference;
  if (g.latency_reference > 0) verdict.latency_spread = g.latency_scale / g.latency_reference;

  std::vector<const GradedProbe*> slow;
  std::set<int> measured;
  for (const GradedProbe& gp : g.probes) {
    if (gp.slow()) slow.push_back(&gp);
    measured.insert(gp.probe->members.begin(), gp.probe->members.end());
  }
  if (slow.empty()) {
    // Nothing slow: settled once every node has been in a probe.
    verdict.settled = measured.size() == topology.nodes.size();
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
  std::vector<LocateSuspect> suspects;
  if (!covering.empty()) {
    for (const Hypothesis& h : covering) suspects.push_back(SuspectOf(topology, g, h));
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
      suspects.push_back(SuspectOf(topology, g, *best));
      std::erase_if(left, [&](const GradedProbe* gp) { return Covers(topology, *best, *gp); });
    }
    // A probe slow while each of its nodes is healthy elsewhere: the path
    // between them (a cable, a port of the switch), kind "link".
    for (const GradedProbe* gp : left) {
      LocateSuspect s;
      s.kind = "link";
      s.name = ProbeName(topology, *gp->probe);
      s.score = std::max(gp->busbw_z, gp->latency_z);
      s.evidence.push_back(Describe(topology, g, *gp));
      suspects.push_back(s);
    }
    verdict.settled = !tie;
  }
  std::stable_sort(
      suspects.begin(), suspects.end(),
      [](const LocateSuspect& a, const LocateSuspect& b) { return a.score > b.score; });
  verdict.suspects = std::move(suspects);
  return verdict;
}

}  // namespace fabtrack::analyzer
