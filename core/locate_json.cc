#include "core/locate_json.h"

#include "core/json_optional.h"

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
          {"latency_spread", v.latency_spread},
          {"confidence", v.confidence},
          {"notes", v.notes}};
}

nlohmann::json LocateRecordToJson(const LocateRecord& r) {
  return {{"cluster", r.cluster},
          {"located_at", r.located_at},
          {"hosts", r.hosts},
          {"exit_status", r.exit_status},
          {"budget_spent", r.budget_spent},
          {"sweep_id", OptionalJson(r.sweep_id)},
          {"run_ids", r.run_ids},
          {"verdict",
           LocateVerdictToJson(r.verdict, r.seconds, static_cast<int>(r.hosts.size()), r.probes)}};
}

std::optional<LocateRecord> LocateRecordFromJson(const nlohmann::json& doc, std::string* why) {
  try {
    LocateRecord r;
    r.cluster = doc.at("cluster").get<std::string>();
    r.located_at = doc.at("located_at").get<std::string>();
    r.hosts = doc.at("hosts").get<std::vector<std::string>>();
    r.exit_status = doc.at("exit_status").get<int>();
    r.budget_spent = doc.at("budget_spent").get<bool>();
    if (const nlohmann::json& s = doc.at("sweep_id"); !s.is_null()) {
      r.sweep_id = s.get<std::string>();
    }
    r.run_ids = doc.at("run_ids").get<std::vector<int64_t>>();
    const nlohmann::json& v = doc.at("verdict");
    r.seconds = v.at("seconds").get<double>();
    r.probes = v.at("probes").get<int>();
    r.verdict.rounds = v.at("rounds").get<int>();
    r.verdict.settled = v.at("settled").get<bool>();
    r.verdict.busbw_spread = v.at("busbw_spread").get<double>();
    r.verdict.latency_spread = v.at("latency_spread").get<double>();
    // Spooled before confidence and notes existed: without them.
    r.verdict.confidence = v.value("confidence", 0.0);
    r.verdict.notes = v.value("notes", std::vector<std::string>{});
    for (const nlohmann::json& s : v.at("suspects")) {
      r.verdict.suspects.push_back({.kind = s.at("kind").get<std::string>(),
                                    .name = s.at("name").get<std::string>(),
                                    .score = s.at("score").get<double>(),
                                    .evidence = s.at("evidence").get<std::vector<std::string>>()});
    }
    return r;
  } catch (const nlohmann::json::exception& e) {
    *why = std::string("locate record: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabtrack
