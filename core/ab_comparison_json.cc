#include "core/ab_comparison_json.h"

#include "core/json_optional.h"

namespace fabtrack {
namespace {

nlohmann::json JudgementToJson(const AbJudgement& j) {
  return {{"collective", j.collective},
          {"nodes", j.nodes},
          {"metric", j.metric},
          {"size_bytes", OptionalJson(j.size_bytes)},
          {"a", j.a},
          {"b", j.b},
          {"ratio", j.ratio},
          {"ratio_low", j.ratio_low},
          {"ratio_high", j.ratio_high},
          {"noise", j.noise},
          {"outcome", AbOutcomeName(j.outcome)}};
}

std::optional<AbOutcome> OutcomeAt(const nlohmann::json& doc, std::string* why) {
  std::optional<AbOutcome> outcome;
  if (doc.contains("outcome") && doc["outcome"].is_string()) {
    outcome = AbOutcomeFromName(doc["outcome"].get<std::string>());
  }
  if (!outcome) *why = "\"outcome\" is not an A/B outcome";
  return outcome;
}

std::optional<AbJudgement> JudgementFromJson(const nlohmann::json& doc, std::string* why) {
  try {
    AbJudgement j;
    j.collective = doc.at("collective").get<std::string>();
    j.nodes = doc.at("nodes").get<int>();
    j.metric = doc.at("metric").get<std::string>();
    if (!doc.at("size_bytes").is_null()) j.size_bytes = doc["size_bytes"].get<int64_t>();
    j.a = doc.at("a").get<std::vector<double>>();
    j.b = doc.at("b").get<std::vector<double>>();
    j.ratio = doc.at("ratio").get<double>();
    j.ratio_low = doc.at("ratio_low").get<double>();
    j.ratio_high = doc.at("ratio_high").get<double>();
    j.noise = doc.at("noise").get<double>();
    std::optional<AbOutcome> outcome = OutcomeAt(doc, why);
    if (!outcome) return std::nullopt;
    j.outcome = *outcome;
    return j;
  } catch (const nlohmann::json::exception& e) {
    *why = std::string("A/B judgement: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace

nlohmann::json AbRecordToJson(const AbRecord& r) {
  nlohmann::json headlines = nlohmann::json::array(), sizes = nlohmann::json::array();
  for (const AbJudgement& j : r.headlines) headlines.push_back(JudgementToJson(j));
  for (const AbJudgement& j : r.sizes) sizes.push_back(JudgementToJson(j));
  return {{"cluster", r.cluster},
          {"ab_id", r.ab_id},
          {"compared_at", r.compared_at},
          {"setting", r.setting},
          {"rounds", r.rounds},
          {"order", r.order},
          {"outcome", AbOutcomeName(r.outcome)},
          {"headlines", headlines},
          {"sizes", sizes}};
}

std::optional<AbRecord> AbRecordFromJson(const nlohmann::json& doc, std::string* why) {
  if (!doc.is_object()) {
    *why = "an A/B comparison is a JSON object";
    return std::nullopt;
  }
  AbRecord r;
  try {
    r.cluster = doc.at("cluster").get<std::string>();
    r.ab_id = doc.at("ab_id").get<std::string>();
    r.compared_at = doc.at("compared_at").get<std::string>();
    r.setting = doc.at("setting").get<std::string>();
    r.rounds = doc.at("rounds").get<int>();
    r.order = doc.at("order").get<std::string>();
    for (const char* key : {"headlines", "sizes"}) {
      if (!doc.at(key).is_array()) {
        *why = std::string("\"") + key + "\" is not a list";
        return std::nullopt;
      }
    }
  } catch (const nlohmann::json::exception& e) {
    *why = std::string("A/B comparison: ") + e.what();
    return std::nullopt;
  }
  std::optional<AbOutcome> outcome = OutcomeAt(doc, why);
  if (!outcome) return std::nullopt;
  r.outcome = *outcome;
  for (const auto& [key, list] :
       {std::pair{"headlines", &r.headlines}, std::pair{"sizes", &r.sizes}}) {
    for (const nlohmann::json& item : doc[key]) {
      std::optional<AbJudgement> j = JudgementFromJson(item, why);
      if (!j) return std::nullopt;
      list->push_back(std::move(*j));
    }
  }
  return r;
}

}  // namespace fabtrack
