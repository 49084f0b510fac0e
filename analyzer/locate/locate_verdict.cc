#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "analyzer/locate/locate.h"
#include "analyzer/locate/locate_evidence.h"
#include "core/text.h"

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
// Gross evidence (kGrossFactor off) is seen again in a later round before
// it convicts: two pairs across one uplink in the same round are not a
// second look.
//
// A link (one pair slow while each of its nodes is healthy with other
// partners) needs slow measurements in kLinkRounds different rounds: in a
// fat tree no cable or port lies on one pair's path alone (each end's cable
// carries its other pairs, and they were fast), so a lone slow pair is far
// more often a burst of other work on a shared machine than a fault, and
// bursts outlast a round: on a loaded 2-core machine 5 of 9 clean netns
// fabrics ended with a pair 5-17x slow in two rounds in a row named as a
// link. A third round apart from them is the look that tells.
constexpr size_t kMeasurements = 2, kLatencyOnlyMeasurements = 3, kGrossRounds = 2;
constexpr size_t kLinkRounds = 3;

bool Confirmed(const std::vector<const GradedProbe*>& convicting, int node,
               size_t rounds_needed = 0) {
  std::set<std::pair<int, std::vector<int>>> measurements;
  std::set<std::vector<int>> partners;
  std::set<int> rounds;
  bool busbw = false, gross = false;
  for (const GradedProbe* gp : convicting) {
    std::vector<int> members = gp->probe->members;
    std::sort(members.begin(), members.end());
    measurements.insert({gp->probe->round, members});
    rounds.insert(gp->probe->round);
    std::erase(members, node);
    partners.insert(members);
    busbw |= gp->slow_busbw;
    gross |= gp->gross;
  }
  if (gross && rounds.size() < kGrossRounds) return false;
  if (rounds.size() < rounds_needed) return false;
  if (busbw) return measurements.size() >= kMeasurements;
  return measurements.size() >= kLatencyOnlyMeasurements &&
         (node < 0 || partners.size() >= kLatencyOnlyMeasurements);
}

constexpr char kUnconfirmed[] =
    "not confirmed yet: to be measured again, with other partners, before it is convicted";

// A suspect with what ranks it: confirmed by repeated evidence, how many
// slow measurements it explains, its score; and those measurements.
struct RankedSuspect {
  LocateSuspect suspect;
  bool confirmed = false;
  // An uplink every probe across which is slow, through two or more of
  // its leaf's nodes (no one node explains them): the plain picture of an
  // uplink fault, ranked before a node. Slowing what leaves a leaf also
  // slows the node that runs the launcher, whose daemons in that leaf talk
  // to it across the uplink: on the netns fabric node1's pairs inside leaf1
  // ran 10-20x slower while leaf2's uplink was throttled, and node1 was
  // named first.
  bool plain_uplink = false;
  std::vector<const GradedProbe*> convicting;
};

RankedSuspect SuspectOf(const LocateTopology& topology, const Grading& g, const Hypothesis& h) {
  RankedSuspect ranked;
  LocateSuspect& s = ranked.suspect;
  s.kind = h.kind;
  s.name = h.Name(topology);
  std::vector<const GradedProbe*>& convicting = ranked.convicting;
  bool busbw = false, latency = false;
  double strength_sum = 0;
  for (const GradedProbe& gp : g.probes) {
    if (!gp.slow() || !h.OnPath(topology, *gp.probe)) continue;
    convicting.push_back(&gp);
    busbw |= gp.slow_busbw;
    latency |= gp.slow_latency;
    strength_sum += Strength(gp);
  }
  s.score = convicting.empty() ? 0 : strength_sum / convicting.size();
  ranked.confirmed = Confirmed(convicting, h.kind == "node" ? h.node : -1);
  if (h.kind == "uplink") {
    std::set<int> through;  // the leaf's nodes on the slow probes
    for (const GradedProbe* gp : convicting) {
      for (int m : gp->probe->members) {
        if (topology.leaf_of.at(topology.nodes[m]) == h.leaf) through.insert(m);
      }
    }
    ranked.plain_uplink = through.size() >= 2;
  }
  if (!ranked.confirmed) s.evidence.push_back(kUnconfirmed);
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
  std::vector<const GradedProbe*> strongest = convicting;
  std::sort(strongest.begin(), strongest.end(),
            [](const GradedProbe* a, const GradedProbe* b) { return Strength(*a) > Strength(*b); });
  for (size_t i = 0; i < strongest.size() && i < 4; ++i) {
    s.evidence.push_back(Describe(topology, *strongest[i]));
  }
  return ranked;
}

// Gross measurements that later ones at healthy speed cleared: said, never
// dropped without a word.
std::vector<std::string> ClearedNotes(const LocateTopology& topology, const Grading& g) {
  std::vector<std::string> notes;
  for (const GradedProbe& gp : g.probes) {
    if (!gp.gross || !gp.refuted) continue;
    notes.push_back(ProbeName(topology, *gp.probe) + " (round " + std::to_string(gp.probe->round) +
                    ") was " + FormatFixed(gp.slowdown, 1) +
                    "x slower than its class, then measured twice at healthy speed: taken for a "
                    "passing disturbance, not a fault");
  }
  return notes;
}

// How much the verdict can be trusted, 0..1 (README, `fabtrack locate`):
// the share of measurements not taken for flukes, times how plain the
// evidence is, times 1 when settled (else a half, shared among the
// suspects). Plain: for a suspect, the median slowdown of the measurements
// that convict the first one, 3x or more counting fully; for no suspect,
// how small a slowdown the healthy spread lets be seen (1.25x: fully; only
// 3x: a half).
double Confidence(const Grading& g, const LocateVerdict& verdict,
                  const std::vector<const GradedProbe*>& top_convicting) {
  if (g.probes.empty()) return 0;
  const double refuted = static_cast<double>(std::count_if(
      g.probes.begin(), g.probes.end(), [](const GradedProbe& gp) { return gp.refuted; }));
  const double agreement = 1 - refuted / g.probes.size();
  constexpr double kLeast = 1 / kSlowBusbwRatio;  // the smallest slowdown called slow
  double plain = 1;
  if (!verdict.suspects.empty()) {
    std::vector<double> slowdowns;
    for (const GradedProbe* gp : top_convicting) slowdowns.push_back(gp->slowdown);
    std::sort(slowdowns.begin(), slowdowns.end());
    const double slowdown = slowdowns.empty() ? 1 : slowdowns[slowdowns.size() / 2];
    plain = std::clamp((slowdown - 1) / (kGrossFactor - 1), 0.0, 1.0);
  } else {
    // The slowdown a probe needs to be called slow under this spread.
    const double busbw_needed =
        1 / std::max(1 / kGrossFactor, std::min(kSlowBusbwRatio, 1 - kSlowZ * g.busbw_spread));
    const double latency_needed =
        std::min(kGrossFactor, std::max(kSlowLatencyRatio, 1 + kSlowZ * g.latency_spread));
    const double needed = std::max(busbw_needed, latency_needed);
    plain = 1 - 0.5 * std::clamp((needed - kLeast) / (kGrossFactor - kLeast), 0.0, 1.0);
  }
  const double settled = verdict.settled ? 1 : 0.5 / std::max<size_t>(1, verdict.suspects.size());
  return std::round(100 * agreement * plain * settled) / 100;
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
  verdict.notes = ClearedNotes(topology, g);

  std::vector<const GradedProbe*> slow;
  std::set<int> measured;
  for (const GradedProbe& gp : g.probes) {
    if (gp.slow()) slow.push_back(&gp);
    measured.insert(gp.probe->members.begin(), gp.probe->members.end());
  }
  if (slow.empty()) {
    // Nothing slow, gross probes cleared twice over: settled once every
    // node has been in a probe and every class's reference rests on enough
    // pairs, enough of them touching no suspect.
    verdict.settled = measured.size() == topology.nodes.size() && !AnyThinReference(g);
    verdict.confidence = Confidence(g, verdict, {});
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
  std::vector<RankedSuspect> suspects;
  bool all_confirmed = true;
  auto suspect = [&](const Hypothesis& h) {
    suspects.push_back(SuspectOf(topology, g, h));
    all_confirmed &= suspects.back().confirmed;
  };
  if (!covering.empty()) {
    for (const Hypothesis& h : covering) suspect(h);
    verdict.settled = covering.size() == 1;
  } else {
    // No single explanation: more than one fault. Greedily take the
    // hypothesis that explains most of what is still unexplained; a tie at
    // any step with one that is not taken later leaves the verdict open for
    // the planner to separate (an uplink and a node that each explain half
    // of the slow probes are both taken: no tie).
    std::vector<const GradedProbe*> left = slow;
    std::set<const Hypothesis*> taken, tied;
    while (!left.empty()) {
      const Hypothesis* best = nullptr;
      size_t best_count = 0;
      std::vector<const Hypothesis*> best_ties;
      for (const Hypothesis& h : candidates) {
        size_t count = std::count_if(left.begin(), left.end(), [&](const GradedProbe* gp) {
          return Covers(topology, h, *gp);
        });
        if (count > best_count) {
          best = &h;
          best_count = count;
          best_ties.clear();
        } else if (count == best_count && count > 0) {
          best_ties.push_back(&h);
        }
      }
      if (!best) break;
      tied.insert(best_ties.begin(), best_ties.end());
      taken.insert(best);
      suspect(*best);
      std::erase_if(left, [&](const GradedProbe* gp) { return Covers(topology, *best, *gp); });
    }
    const bool tie =
        std::any_of(tied.begin(), tied.end(), [&](const Hypothesis* h) { return !taken.count(h); });
    // A probe slow while each of its nodes is healthy elsewhere: the path
    // between them (a cable, a port of the switch), kind "link", named
    // once with every slow measurement of that pair in that direction.
    std::set<std::vector<int>> named;
    for (const GradedProbe* gp : left) {
      if (!named.insert(gp->probe->members).second) continue;
      RankedSuspect ranked;
      for (const GradedProbe* other : left) {
        if (other->probe->members == gp->probe->members) ranked.convicting.push_back(other);
      }
      LocateSuspect& s = ranked.suspect;
      s.kind = "link";
      s.name = ProbeName(topology, *gp->probe);
      for (const GradedProbe* other : ranked.convicting)
        s.score = std::max(s.score, Strength(*other));
      ranked.confirmed = Confirmed(ranked.convicting, -1, kLinkRounds);
      all_confirmed &= ranked.confirmed;
      if (!ranked.confirmed) s.evidence.push_back(kUnconfirmed);
      for (const GradedProbe* other : ranked.convicting) {
        s.evidence.push_back(Describe(topology, *other));
      }
      suspects.push_back(std::move(ranked));
    }
    verdict.settled = !tie;
  }
  verdict.settled &= all_confirmed && !AnyThinReference(g);
  // Confirmed suspects first (a fluke may score higher than a fault), then
  // a plain uplink, then the one that explains the most slow measurements
  // (an uplink behind every slow probe across its leaf before a pair slow
  // by a burst of other work, however high that pair's z), then by score.
  std::stable_sort(suspects.begin(), suspects.end(),
                   [](const RankedSuspect& a, const RankedSuspect& b) {
                     if (a.confirmed != b.confirmed) return a.confirmed;
                     if (a.plain_uplink != b.plain_uplink) return a.plain_uplink;
                     if (a.convicting.size() != b.convicting.size()) {
                       return a.convicting.size() > b.convicting.size();
                     }
                     return a.suspect.score > b.suspect.score;
                   });
  for (RankedSuspect& s : suspects) verdict.suspects.push_back(s.suspect);
  verdict.confidence = Confidence(g, verdict, suspects.front().convicting);
  return verdict;
}

}  // namespace fabtrack::analyzer
