#include <algorithm>
#include <map>
#include <set>

#include "analyzer/locate/locate.h"
#include "analyzer/locate/locate_evidence.h"

namespace fabtrack::analyzer {
namespace {

std::string LeafOf(const LocateTopology& topology, int node) {
  auto it = topology.leaf_of.find(topology.nodes[node]);
  return it == topology.leaf_of.end() ? "" : it->second;
}

// Round one covers every node once: with leaves, half of each leaf's nodes
// in pairs inside the leaf and the other half across to other leaves, so
// that every uplink carries probes and every leaf has a probe that avoids
// its uplink; without, node i with node i + N/2. An odd node out waits for
// the next round.
LocateRound FirstRound(const LocateTopology& topology) {
  LocateRound round;
  const int n = static_cast<int>(topology.nodes.size());
  if (!topology.HasLeaves()) {
    for (int i = 0; i + n / 2 < n && i < n / 2; ++i) round.probes.push_back({i, i + n / 2});
    return round;
  }
  std::map<std::string, std::vector<int>> by_leaf;
  for (int i = 0; i < n; ++i) by_leaf[LeafOf(topology, i)].push_back(i);
  std::vector<int> across;
  for (auto& [leaf, members] : by_leaf) {
    const size_t inside = (members.size() / 2) & ~size_t{1};  // an even number, about half
    for (size_t k = 0; k + 1 < inside; k += 2) round.probes.push_back({members[k], members[k + 1]});
    across.insert(across.end(), members.begin() + inside, members.end());
  }
  // `across` is ordered leaf by leaf: pairing it with itself shifted by half
  // puts the two ends of a pair in different leaves unless one leaf holds
  // more than half of it.
  const size_t half = across.size() / 2;
  for (size_t k = 0; k < half; ++k) round.probes.push_back({across[k], across[k + half]});
  return round;
}

}  // namespace

LocateRound PlanLocateRound(const LocateTopology& topology, const std::vector<LocateProbe>& probes,
                            const LocateVerdict& verdict) {
  if (probes.empty()) return FirstRound(topology);
  LocateRound round;
  if (verdict.settled) return round;
  const int n = static_cast<int>(topology.nodes.size());
  const Grading g = GradeProbes(topology, probes);

  // Healthy: in a probe that was not slow, and not a suspect.
  std::set<int> measured, healthy, suspect_nodes;
  std::set<std::string> suspect_leaves;
  for (const LocateSuspect& s : verdict.suspects) {
    if (s.kind == "uplink") suspect_leaves.insert(s.name.substr(0, s.name.rfind('-')));
    if (s.kind != "node") continue;
    for (int i = 0; i < n; ++i) {
      if (topology.nodes[i] == s.name) suspect_nodes.insert(i);
    }
  }
  for (const GradedProbe& gp : g.probes) {
    measured.insert(gp.probe->members.begin(), gp.probe->members.end());
    if (gp.slow()) continue;
    for (int m : gp.probe->members) {
      if (!suspect_nodes.count(m)) healthy.insert(m);
    }
  }
  // Who has been in a probe with whom: a suspect is paired with a partner
  // it has not met yet when there is one, so that repeated evidence comes
  // from different partners.
  std::map<int, std::set<int>> met;
  for (const LocateProbe& p : probes) {
    for (int a : p.members) met[a].insert(p.members.begin(), p.members.end());
  }
  std::set<int> used;
  // A healthy partner not used yet: in `leaf` when one is free (the probe
  // then avoids every uplink), else anywhere whose uplink is not suspected.
  auto partner = [&](const std::string& leaf, bool same_leaf, int for_node = -1) -> int {
    for (bool avoid_met : {true, false}) {
      int fallback = -1;
      for (int h : healthy) {
        if (used.count(h) || (avoid_met && for_node >= 0 && met[for_node].count(h))) continue;
        const std::string other = LeafOf(topology, h);
        if (same_leaf ? other == leaf : other != leaf && !suspect_leaves.count(other)) return h;
        if (fallback < 0 && !suspect_leaves.count(other)) fallback = h;
      }
      if (same_leaf && fallback >= 0) return fallback;
    }
    return -1;
  };
  auto add = [&](int a, int b) {
    round.probes.push_back({a, b});
    used.insert(a);
    used.insert(b);
  };
  for (int c : suspect_nodes) {
    if (used.count(c)) continue;
    if (int p = partner(LeafOf(topology, c), true, c); p >= 0) add(c, p);
  }
  // A slow probe that no suspect node or uplink explains (a link, or a
  // fluke): the same pair again, which confirms the one or refutes the other.
  for (const GradedProbe& gp : g.probes) {
    if (!gp.slow()) continue;
    const std::vector<int>& m = gp.probe->members;
    bool explained = false, busy = false;
    for (int member : m) {
      explained |= suspect_nodes.count(member) > 0;
      // Across a suspected uplink; one-way, sent out of its leaf.
      explained |= gp.kind == ProbeClass::kCrossLeaf && (!gp.probe->one_way || member == m[0]) &&
                   suspect_leaves.count(LeafOf(topology, member)) > 0;
      busy |= used.count(member) > 0;
    }
    if (explained || busy) continue;
    round.probes.push_back(m);
    used.insert(m.begin(), m.end());
  }
  // Healthy nodes already measured slow across leaves: every suspected
  // uplink stays consistent whatever more such probes say (two leaves, a
  // fault in both directions: no pair test tells the uplinks apart).
  bool healthy_across_slow = false;
  for (const GradedProbe& gp : g.probes) {
    healthy_across_slow |= gp.slow() && gp.kind == ProbeClass::kCrossLeaf &&
                           std::all_of(gp.probe->members.begin(), gp.probe->members.end(),
                                       [&](int m) { return healthy.count(m) > 0; });
  }
  for (const std::string& leaf : suspect_leaves) {
    // A probe across the suspected uplink between two nodes proved healthy:
    // slow convicts the uplink, fast clears it.
    int inside = -1;
    for (int h : healthy) {
      if (!used.count(h) && LeafOf(topology, h) == leaf) {
        inside = h;
        break;
      }
    }
    if (inside < 0) continue;
    used.insert(inside);
    int outside = partner(leaf, false);
    if (outside < 0 && !healthy_across_slow) {
      // Every other leaf's uplink is suspected too (two leaves: one slow
      // cross-leaf probe from a fault and one from a burst make both uplinks
      // explain the round). A probe between healthy nodes across both still
      // separates: fast clears both uplinks, slow keeps both.
      for (int h : healthy) {
        if (!used.count(h) && LeafOf(topology, h) != leaf) {
          outside = h;
          break;
        }
      }
    }
    if (outside >= 0) {
      add(inside, outside);
    } else {
      used.erase(inside);
    }
  }
  for (int i = 0; i < n; ++i) {
    if (measured.count(i) || used.count(i)) continue;
    if (int p = partner(LeafOf(topology, i), true); p >= 0) add(i, p);
  }
  // A class whose reference is thin: pairs of that class not measured yet,
  // among the nodes this round leaves free and no suspect, until it has
  // enough. Across leaves first: that class has the fewest pairs in round one.
  // When the class has pairs enough and lacks only pairs that touch no
  // suspect, a pair across a suspected uplink cannot be one: on two leaves
  // with both uplinks suspected every pair across is such a pair, and asking
  // for them one by one went on until the round cap (64 rounds on 2 x 32).
  for (auto it = g.references.rbegin(); it != g.references.rend(); ++it) {
    const auto& [kind, reference] = *it;
    int missing = MissingReferencePairs(reference);
    const bool only_healthy_missing =
        reference.pairs >= std::min(kMinReferencePairs, reference.possible_pairs);
    auto across_suspected_uplink = [&](int a, int b) {
      return kind == ProbeClass::kCrossLeaf && (suspect_leaves.count(LeafOf(topology, a)) ||
                                                suspect_leaves.count(LeafOf(topology, b)));
    };
    for (int a = 0; a < n && missing > 0; ++a) {
      if (suspect_nodes.count(a)) continue;
      for (int b = a + 1; b < n && missing > 0 && !used.count(a); ++b) {
        if (used.count(b) || met[a].count(b) || suspect_nodes.count(b)) continue;
        if (only_healthy_missing && across_suspected_uplink(a, b)) continue;
        LocateProbe pair;
        pair.members = {a, b};
        if (ClassOf(topology, pair) != kind) continue;
        add(a, b);
        --missing;
      }
    }
  }
  return round;
}

}  // namespace fabtrack::analyzer
