// A cable of the previous scan that is gone (down), one that is linked but
// not Active (the SM has not brought it up), and one that went down and up
// again in the window (LinkDownedCounter grew: flapping).
#include <sstream>

#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::fabric_analysis {
namespace {

std::string StateOf(const FabricPort* p) {
  if (!p) return "not seen";
  return p->state.value_or("?") + "/" + p->phys_state.value_or("?");
}

}  // namespace

void JudgeLinkState(const FabricWindow& w, const FabricThresholds&, std::vector<Finding>& out) {
  for (const LinkWindow& lw : w.links) {
    if (lw.was_linked && !lw.is_linked) {
      std::ostringstream msg;
      msg << "link down: " << LinkName(lw.link) << " was in the previous scan and is gone ("
          << EndName(lw.link.a) << " " << StateOf(lw.a.now) << ", " << EndName(lw.link.b) << " "
          << StateOf(lw.b.now) << ")";
      Finding f = LinkFinding(lw, "fabric_link_down", Severity::kCritical, msg.str());
      f.evidence["a"]["state_now"] = StateOf(lw.a.now);
      f.evidence["b"]["state_now"] = StateOf(lw.b.now);
      out.push_back(std::move(f));
      continue;
    }
    if (!lw.is_linked) continue;
    for (const auto& [side, end] : {std::pair{&lw.a, &lw.link.a}, std::pair{&lw.b, &lw.link.b}}) {
      if (side->now && side->now->state && *side->now->state != "Active") {
        out.push_back(
            LinkFinding(lw, "fabric_link_not_active", Severity::kWarning,
                        EndName(*end) + " is " + StateOf(side->now) + " on " + LinkName(lw.link)));
        break;
      }
    }
    uint64_t downed = CounterDelta(lw.a, "link_downed").value_or(0) +
                      CounterDelta(lw.b, "link_downed").value_or(0);
    if (downed > 0 && lw.was_linked) {
      std::ostringstream msg;
      msg << "link flapping: " << LinkName(lw.link) << " went down " << downed << " time(s) in "
          << static_cast<int64_t>(w.seconds) << " s and is up again";
      Finding f = LinkFinding(lw, "fabric_link_flapping", Severity::kWarning, msg.str());
      f.value = static_cast<double>(downed);
      f.unit = "count";
      out.push_back(std::move(f));
    }
  }
}

}  // namespace fabtrack::fabric_analysis
