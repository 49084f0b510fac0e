// congestion: a port that waited for credits (port_xmit_wait), or a RoCE
// port that sent or handled many congestion notifications (CNP/ECN,
// hw_counters) or PFC pause frames (ethtool) during a judged run (or between
// two snapshots of the port no run brackets), as a rate over the window; a
// saturated counter has no rate. xmit_wait counts ticks of the port's clock in which
// it had data but no credit; the rate thresholds are per second.

#include <algorithm>
#include <iterator>

#include "analyzer/detector.h"
#include "analyzer/port_window.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::congestion_detector {
namespace {

struct Signal {
  const char* label;
  const char* setting;
  bool (*matches)(const std::string& counter);
};

bool IsXmitWait(const std::string& c) { return c == "port_xmit_wait"; }
bool IsCnp(const std::string& c) {
  return c == "hw:np_cnp_sent" || c == "hw:rp_cnp_handled" || c == "hw:np_ecn_marked_roce_packets";
}
bool IsPause(const std::string& c) {
  return c.rfind("ethtool:", 0) == 0 && c.find("pause") != std::string::npos;
}

constexpr Signal kSignals[] = {
    {"xmit_wait", "max_xmit_wait_per_s", IsXmitWait},
    {"CNP/ECN", "max_cnp_per_s", IsCnp},
    {"PFC pause", "max_pause_per_s", IsPause},
};

std::string Rate(double v) { return FormatFixed(v, 0) + "/s"; }

void Detect(const InputIndex& input, const DetectorSettings& settings,
            std::vector<Finding>* findings) {
  for (const PortWindow& window : JudgedPortWindows(input)) {
    const PortKey& port = window.port;
    const auto& counters = window.counters;
    // Most windows of a healthy night are below every limit (a 4096-node
    // night: 32,768 ports whose xmit_wait moved): no evidence is built for
    // them, only for the windows that become findings.
    const auto rate_of = [&](const Signal& s) {
      double rate = 0;
      for (const auto& [name, d] : counters) {
        if (s.matches(name) && d->per_second) rate += *d->per_second;
      }
      return rate;
    };
    if (std::none_of(std::begin(kSignals), std::end(kSignals),
                     [&](const Signal& s) { return rate_of(s) > settings[s.setting]; })) {
      continue;
    }
    std::vector<std::string> parts;
    nlohmann::json evidence = nlohmann::json::object();
    double worst_ratio = 0, worst_value = 0, worst_limit = 0;
    std::string worst_unit;
    for (const Signal& s : kSignals) {
      double rate = 0;
      for (const auto& [name, d] : counters) {
        if (s.matches(name) && d->per_second) {
          rate += *d->per_second;
          evidence[name] = *d->per_second;
        }
      }
      const double limit = settings[s.setting];
      if (rate <= limit) continue;
      parts.push_back(std::string(s.label) + " " + Rate(rate) + " (above " + Rate(limit) + ")");
      if (rate / limit > worst_ratio) {
        worst_ratio = rate / limit;
        worst_value = rate;
        worst_limit = limit;
        worst_unit = std::string(s.label) + " per second";
      }
    }
    if (parts.empty()) continue;
    Finding f = PortFinding(window, Severity::kWarning);
    f.value = worst_value;
    f.baseline = worst_limit;
    f.unit = worst_unit;
    std::string what;
    for (const std::string& p : parts) what += (what.empty() ? "" : ", ") + p;
    f.message = port.Subject() + " congested: " + what;
    f.evidence = {{"per_second", evidence}};
    JoinWithWindow(input, window, &f);
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "congestion",
    .summary = "credit waits, CNP/ECN or PFC pause rates of a port during a run (warning)",
    .params = {{"max_xmit_wait_per_s", 5e6,
                "port_xmit_wait ticks per second (a fully stalled port counts ~1e8+)"},
               {"max_cnp_per_s", 1000, "CNPs sent + handled + ECN-marked packets per second"},
               {"max_pause_per_s", 1000, "PFC/pause frames per second, all priorities"}},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::congestion_detector
