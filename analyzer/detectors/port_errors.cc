// port_errors: error counters that moved during a judged run's window (or
// between two snapshots of the port no run brackets: imported dumps), per
// port (counters/ are the IB PortCounters, hw:* the mlx5 hw_counters that
// mean lost or retried packets on RoCE). link_downed, or errors beyond the
// critical threshold, are critical; a legacy counter stuck at its maximum is
// a warning: how much it counted is unknown, reset it (perfquery -x -R).
#include <cstdio>

#include "analyzer/detector.h"
#include "analyzer/port_window.h"

namespace fabtrack::analyzer::port_errors_detector {
namespace {

// Error counters and whether one count already matters (a link that went
// down, a packet the port dropped) or a few are line noise (symbol errors
// that FEC corrected, a retransmitted packet).
struct ErrorCounter {
  const char* name;
  bool every_count_matters;
};
constexpr ErrorCounter kErrorCounters[] = {
    {"link_downed", true},
    {"link_error_recovery", true},
    {"symbol_error", false},
    {"port_rcv_errors", false},
    {"port_rcv_remote_physical_errors", false},
    {"port_rcv_switch_relay_errors", false},
    {"port_xmit_discards", false},
    {"port_xmit_constraint_errors", false},
    {"port_rcv_constraint_errors", false},
    {"local_link_integrity_errors", true},
    {"excessive_buffer_overrun_errors", true},
    {"VL15_dropped", false},
    {"hw:out_of_sequence", false},
    {"hw:packet_seq_err", false},
    {"hw:local_ack_timeout_err", false},
    {"hw:rnr_nak_retry_err", false},
    {"hw:implied_nak_seq_err", false},
    {"hw:req_cqe_error", false},
    {"hw:resp_cqe_error", false},
    {"hw:out_of_buffer", false},
};

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  const double noise = settings["min_errors"];
  const double critical = settings["critical_errors"];
  for (const PortWindow& window : JudgedPortWindows(input)) {
    const PortKey& port = window.port;
    const auto& counters = window.counters;
    std::vector<std::string> moved, saturated;
    // Null until a counter is added (then an object): most windows have
    // none, and an empty object per port costs an allocation each.
    nlohmann::json evidence;
    int64_t total = 0;
    bool is_critical = false;
    for (const ErrorCounter& c : kErrorCounters) {
      auto it = counters.find(c.name);
      if (it == counters.end()) continue;
      const PortDeltaView& d = *it->second;
      if (d.saturated) {
        saturated.push_back(c.name);
        evidence[c.name] = "saturated";
        continue;
      }
      if (!d.delta || *d.delta <= 0) continue;
      if (!c.every_count_matters && *d.delta < noise) continue;
      moved.push_back(std::string(c.name) + " +" + std::to_string(*d.delta));
      evidence[c.name] = *d.delta;
      total += *d.delta;
      if (std::string(c.name) == "link_downed" || *d.delta >= critical) is_critical = true;
    }
    if (moved.empty() && saturated.empty()) continue;
    Finding f = PortFinding(window, is_critical ? Severity::kCritical : Severity::kWarning);
    f.value = static_cast<double>(total);
    f.baseline = 0;
    f.unit = window.run ? "errors in the run's window" : "errors between the snapshots";
    std::string what;
    for (const std::string& m : moved) what += (what.empty() ? "" : ", ") + m;
    if (!saturated.empty()) {
      std::string names;
      for (const std::string& s : saturated) names += (names.empty() ? "" : ", ") + s;
      what += std::string(what.empty() ? "" : "; ") + names +
              " saturated (stuck at the counter's maximum: reset with perfquery -x -R)";
    }
    f.message = port.Subject() + ": " + what;
    f.evidence = {{"counters", evidence}};
    JoinWithWindow(input, window, &f);
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "port_errors",
    .summary =
        "error counters that moved in a run's or snapshots' window, per port (critical: link down)",
    .params = {{"min_errors", 10,
                "noisy counters (symbol errors, retransmits) count from this many per window"},
               {"critical_errors", 1000, "this many of one counter in a window is critical"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::port_errors_detector
