// Error counters that grew on either end of a cable in the window: the
// physical layer (symbol errors, link error recovery, local link
// integrity), packets dropped on receive, packets discarded. One family
// file: the three differ only in which counters they add up.
#include <sstream>

#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::fabric_analysis {
namespace {

struct Family {
  const char* kind;
  const char* what;
  std::vector<std::string> counters;
};

const Family kFamilies[] = {
    {"fabric_symbol_errors",
     "physical-layer errors",
     {"symbol_error", "link_error_recovery", "local_link_integrity_errors"}},
    {"fabric_rcv_errors",
     "packets dropped on receive",
     {"port_rcv_errors", "port_rcv_remote_physical_errors", "excessive_buffer_overrun_errors",
      "VL15_dropped"}},
    {"fabric_discards",
     "packets discarded",
     {"port_xmit_discards", "port_rcv_switch_relay_errors", "port_xmit_constraint_errors",
      "port_rcv_constraint_errors"}},
};

}  // namespace

void JudgeErrorCounters(const FabricWindow& w, const FabricThresholds& t,
                        std::vector<Finding>& out) {
  for (const LinkWindow& lw : w.links) {
    if (!lw.is_linked || !lw.was_linked) continue;
    for (const Family& family : kFamilies) {
      nlohmann::json deltas = nlohmann::json::object();
      uint64_t total = 0;
      std::ostringstream grew;
      for (const auto& [side, end, label] :
           {std::tuple{&lw.a, &lw.link.a, "a"}, std::tuple{&lw.b, &lw.link.b, "b"}}) {
        for (const std::string& c : family.counters) {
          std::optional<uint64_t> d = CounterDelta(*side, c);
          if (!d || *d == 0) continue;
          deltas[label][c] = *d;
          total += *d;
          grew << (grew.tellp() > 0 ? ", " : "") << c << " +" << *d << " at " << EndName(*end);
        }
      }
      if (total < t.min_error_delta || total == 0) continue;
      std::ostringstream msg;
      msg << family.what << " on " << LinkName(lw.link) << ": " << grew.str() << " in "
          << static_cast<int64_t>(w.seconds) << " s";
      Finding f = LinkFinding(lw, family.kind, Severity::kWarning, msg.str());
      f.value = static_cast<double>(total);
      f.unit = "count";
      f.evidence["deltas"] = deltas;
      f.evidence["window_s"] = w.seconds;
      out.push_back(std::move(f));
    }
  }
}

}  // namespace fabtrack::fabric_analysis
