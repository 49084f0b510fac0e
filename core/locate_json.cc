#include "core/locate_json.h"

namespace fabtrack {

nlohmann::json LocateVerdictToJson(const LocateVerdict& v, double seconds, int nodes, int probes) {
  nlohmann::json suspects = nlohmann::json::array();
  for (const LocateSuspect& s : v.suspects) {
    suspects.push_back(
        {{"kind", s.kind}, {"name", s.name}, {"score", s.score}, {"evidence", s.evidence}});
  }
  return {{"suspects", suspects},
          {"rounds", v.rounds},
          {"seconds", seconds},
          {"settled", v.settled},
          {"nodes", nodes},
          {"probes", probes},
          {"busbw_spread", v.busbw_spread},
          {"latency_spread", v.latency_spread}};
}

}  // namespace fabtrack
