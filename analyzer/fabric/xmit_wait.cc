// Congestion on uplinks: PortXmitWait (ticks a port had data to send but
// no credit) growing faster than the threshold on either end of a
// switch-to-switch cable. Host links are left to the HCA-side detectors.
#include <sstream>

#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::fabric_analysis {

void JudgeXmitWait(const FabricWindow& w, const FabricThresholds& t, std::vector<Finding>& out) {
  if (w.seconds <= 0) return;
  for (const LinkWindow& lw : w.links) {
    if (!lw.is_linked || !lw.was_linked || lw.tier != "switch-switch") continue;
    double worst = 0;
    const FabricLinkEnd* waiting = nullptr;
    nlohmann::json rates = nlohmann::json::object();
    for (const auto& [side, end, label] :
         {std::tuple{&lw.a, &lw.link.a, "a"}, std::tuple{&lw.b, &lw.link.b, "b"}}) {
      std::optional<uint64_t> d = CounterDelta(*side, "port_xmit_wait");
      if (!d) continue;
      double rate = static_cast<double>(*d) / w.seconds;
      rates[label] = rate;
      if (rate > worst) {
        worst = rate;
        waiting = end;
      }
    }
    if (!waiting || worst < t.xmit_wait_per_second) continue;
    std::ostringstream msg;
    msg << "congestion on uplink " << LinkName(lw.link) << ": " << EndName(*waiting)
        << " waited to send " << static_cast<int64_t>(worst) << " ticks/s (threshold "
        << t.xmit_wait_per_second << ")";
    Finding f = LinkFinding(lw, "fabric_congestion", Severity::kWarning, msg.str());
    f.value = worst;
    f.baseline = t.xmit_wait_per_second;
    f.unit = "xmit_wait ticks/s";
    f.evidence["xmit_wait_per_second"] = rates;
    f.evidence["window_s"] = w.seconds;
    out.push_back(std::move(f));
  }
}

}  // namespace fabtrack::fabric_analysis
