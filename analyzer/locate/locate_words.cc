#include "analyzer/locate/locate.h"
#include "core/text.h"

namespace fabtrack::analyzer {

std::string DescribeSuspect(const LocateSuspect& s) {
  if (s.kind == "uplink") return "the uplink " + s.name + " is slow";
  if (s.kind == "link") return "the link " + s.name + " is slow";
  return s.kind + " " + s.name + " is slow";
}

std::string DescribeLocateVerdict(const LocateVerdict& v, bool budget_spent) {
  std::string out;
  if (v.suspects.empty()) {
    out = "no fault found (healthy spread: bandwidth " + FormatFixed(100 * v.busbw_spread, 1) +
          "%, small-message latency " + FormatFixed(100 * v.latency_spread, 1) + "%)";
    if (!v.settled) out += "; not settled: too little measured to clear every node";
  } else {
    for (size_t i = 0; i < v.suspects.size(); ++i) {
      const LocateSuspect& s = v.suspects[i];
      out += (i == 0   ? ""
              : i == 1 ? "; or else "
                       : ", or ") +
             DescribeSuspect(s) + " (score " + FormatFixed(s.score, 1) + ")";
    }
    if (!v.settled) out += "; not settled: the measurements fit more than one explanation";
  }
  if (budget_spent) out += "; stopped by its time budget";
  return out;
}

}  // namespace fabtrack::analyzer
