// A cable trained below the norm of its tier: the width x speed most
// cables of the same kind (switch-switch, switch-CA) run at this scan, so a
// 1x or DDR uplink among 4x EDR ones is named. Needs no previous scan.
#include <map>
#include <sstream>
#include <string>

#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::fabric_analysis {
namespace {

std::optional<double> Rate(const LinkWindow& lw) {
  std::optional<double> a = lw.a.now ? lw.a.now->rate_gbps : std::nullopt;
  std::optional<double> b = lw.b.now ? lw.b.now->rate_gbps : std::nullopt;
  if (a && b) return std::min(*a, *b);
  return a ? a : b;
}

std::string RateText(const LinkWindow& lw) {
  const FabricPort* p = lw.a.now ? lw.a.now : lw.b.now;
  if (!p) return "?";
  // Called for every cable: no ostringstream per call.
  return std::to_string(p->width.value_or(0)) + "x" + p->speed.value_or("?");
}

}  // namespace

void JudgeLinkRate(const FabricWindow& w, const FabricThresholds&, std::vector<Finding>& out) {
  std::map<std::string, std::map<double, int>> tiers;  // tier -> rate -> cables
  std::map<std::string, std::map<double, std::string>> texts;
  for (const LinkWindow& lw : w.links) {
    if (!lw.is_linked) continue;
    if (std::optional<double> r = Rate(lw)) {
      ++tiers[lw.tier][*r];
      texts[lw.tier][*r] = RateText(lw);
    }
  }
  std::map<std::string, std::pair<double, int>> norms;
  for (const auto& [tier, rates] : tiers) {
    std::pair<double, int> best{0, 0};
    for (const auto& [rate, count] : rates) {
      if (count > best.second || (count == best.second && rate > best.first)) best = {rate, count};
    }
    norms[tier] = best;
  }
  for (const LinkWindow& lw : w.links) {
    if (!lw.is_linked) continue;
    std::optional<double> r = Rate(lw);
    auto norm = norms.find(lw.tier);
    if (!r || norm == norms.end() || norm->second.second < 2 || *r >= norm->second.first) continue;
    std::ostringstream msg;
    msg << "link below its tier's rate: " << LinkName(lw.link) << " runs " << RateText(lw) << " ("
        << *r << " Gb/s) where " << norm->second.second << " " << lw.tier << " cables run "
        << texts[lw.tier][norm->second.first] << " (" << norm->second.first << " Gb/s)";
    Finding f = LinkFinding(lw, "fabric_link_degraded", Severity::kWarning, msg.str());
    f.value = *r;
    f.baseline = norm->second.first;
    f.unit = "Gb/s";
    out.push_back(std::move(f));
  }
}

}  // namespace fabtrack::fabric_analysis
