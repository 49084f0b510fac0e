// link_degraded: a port left not ACTIVE (or physically not LinkUp) after a
// judged run while the inventory knows it as an RDMA port of this cluster
// (critical), or trained below its peers' rate — the other ports of the same
// link layer on the same host, else the cluster's usual rate (warning: a
// 400 Gb/s NDR port at 200 is a cable or transceiver problem).
#include <algorithm>
#include <cstdio>
#include <map>

#include "analyzer/detector.h"
#include "analyzer/port_window.h"

namespace fabtrack::analyzer::link_degraded_detector {
namespace {

// The most common rate among `rates` (ties: the highest).
std::optional<double> ModeRate(const std::vector<double>& rates) {
  std::map<double, int> counts;
  for (double r : rates) ++counts[r];
  std::optional<double> best;
  int best_count = 0;
  for (const auto& [rate, count] : counts) {
    if (count >= best_count) {
      best = rate;
      best_count = count;
    }
  }
  return best;
}

std::string Gbps(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g Gb/s", v);
  return buf;
}

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const double min_ratio = settings["min_rate_ratio"];
  // The cluster's usual rate per link layer, from the whole inventory.
  std::map<std::string, std::vector<double>> cluster_rates;
  for (const PortStateView& p : input.input().port_inventory) {
    if (p.rate_gbps && p.state == "ACTIVE") {
      cluster_rates[p.link_layer.value_or("")].push_back(*p.rate_gbps);
    }
  }
  for (const RunView* run : input.judged()) {
    auto states = input.PortStates(run->id);
    for (const PortStateView& p : states) {
      const PortKey key{p.host, p.device, p.port};
      if (p.state && *p.state != "ACTIVE") {
        Finding f = PortFinding(*run, key, Severity::kCritical);
        f.unit = "state";
        f.message = key.Subject() + " is " + *p.state +
                    (p.phys_state ? " (" + *p.phys_state + ")" : std::string()) + " after the run";
        f.evidence = {{"state", *p.state}, {"phys_state", p.phys_state.value_or("")}};
        JoinWithRun(input, *run, &f);
        findings->push_back(std::move(f));
        continue;
      }
      if (!p.rate_gbps) continue;
      std::vector<double> peers;
      for (const PortStateView& q : states) {
        if (q.host == p.host && !(q.device == p.device && q.port == p.port) && q.rate_gbps &&
            q.state == "ACTIVE" && q.link_layer == p.link_layer) {
          peers.push_back(*q.rate_gbps);
        }
      }
      std::optional<double> expected;
      if (!peers.empty()) expected = ModeRate(peers);
      std::string from = "its peers on " + p.host;
      if (!expected || *expected <= *p.rate_gbps) {
        auto it = cluster_rates.find(p.link_layer.value_or(""));
        if (it != cluster_rates.end() && it->second.size() >= 4) {
          expected = ModeRate(it->second);
          from = "the cluster's usual rate";
        }
      }
      if (!expected || *p.rate_gbps >= *expected * min_ratio) continue;
      Finding f = PortFinding(*run, key, Severity::kWarning);
      f.value = *p.rate_gbps;
      f.baseline = *expected;
      f.unit = "Gb/s";
      f.message = key.Subject() + " trained at " + Gbps(*p.rate_gbps) + ", " + from + " at " +
                  Gbps(*expected);
      f.evidence = {{"rate_gbps", *p.rate_gbps}, {"expected_gbps", *expected}, {"from", from}};
      JoinWithRun(input, *run, &f);
      findings->push_back(std::move(f));
    }
  }
}

const DetectorRegistrar kRegistered({
    .name = "link_degraded",
    .summary = "a port not ACTIVE after a run (critical) or trained below its peers' rate",
    .params = {{"min_rate_ratio", 0.99, "flag a rate below this fraction of the peers' rate"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::link_degraded_detector
