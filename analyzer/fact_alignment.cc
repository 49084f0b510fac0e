#include "analyzer/fact_alignment.h"

#include <algorithm>
#include <set>

namespace fabtrack::analyzer {
namespace {

void AddEntries(const std::string& json_text, std::map<std::string, std::string>* out) {
  const nlohmann::json doc = nlohmann::json::parse(json_text, nullptr, false);
  if (!doc.is_object()) return;
  for (const auto& [k, v] : doc.items()) {
    if (v.is_string()) (*out)[k] = v.get<std::string>();
  }
}

// what_changed's {"before", "after"} leaves by fact name: top-level facts
// and the entries of its nccl_env and node_facts maps.
std::vector<std::tuple<std::string, nlohmann::json, nlohmann::json>> Changes(
    const nlohmann::json& what_changed) {
  std::vector<std::tuple<std::string, nlohmann::json, nlohmann::json>> out;
  for (const auto& [key, value] : what_changed.items()) {
    if (!value.is_object()) continue;  // hosts_added / hosts_removed lists
    if (value.contains("before") && value.contains("after")) {
      out.emplace_back(key, value["before"], value["after"]);
      continue;
    }
    for (const auto& [name, change] : value.items()) {
      if (change.is_object() && change.contains("after")) {
        out.emplace_back(name, change.value("before", nlohmann::json()), change["after"]);
      }
    }
  }
  return out;
}

// A value as FlatFacts spells it; null (unset) as "".
std::string Spelled(const nlohmann::json& v) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_boolean()) return v.get<bool>() ? "true" : "false";
  if (v.is_null()) return "";
  return v.dump();
}

}  // namespace

std::map<std::string, std::string> FlatFacts(const RunView& run) {
  std::map<std::string, std::string> facts;
  if (run.nccl_version) facts["nccl_version"] = *run.nccl_version;
  if (run.cuda_version) facts["cuda_version"] = *run.cuda_version;
  if (run.driver_version) facts["driver_version"] = *run.driver_version;
  if (run.network) facts["network"] = *run.network;
  if (run.gdrdma) facts["gdrdma"] = *run.gdrdma ? "true" : "false";
  AddEntries(run.nccl_env_json, &facts);
  AddEntries(run.node_facts_json, &facts);
  return facts;
}

void RankWhatChanged(const InputIndex& input, std::vector<Finding>* findings) {
  // Where each regressed series changed: series name -> earliest change point.
  std::map<std::string, double> changed_at;
  std::map<int64_t, const RunView*> by_id;
  for (const RunView& run : input.runs()) by_id[run.id] = &run;
  for (const Finding& f : *findings) {
    if (!f.evidence.is_object() || !f.evidence.contains("change_point")) continue;
    const auto at = by_id.find(f.evidence["change_point"].value("run_id", int64_t{0}));
    if (at == by_id.end()) continue;
    const std::string series = SeriesName(*at->second);
    auto [it, fresh] = changed_at.emplace(series, at->second->started_at);
    if (!fresh) it->second = std::min(it->second, at->second->started_at);
  }
  if (changed_at.empty()) return;
  // Each run: regressed (at or after its series' change point) and its facts.
  struct Labeled {
    bool regressed;
    std::map<std::string, std::string> facts;
  };
  std::vector<Labeled> runs;
  for (const RunView& run : input.runs()) {
    const auto it = changed_at.find(SeriesName(run));
    runs.push_back({it != changed_at.end() && run.started_at >= it->second, FlatFacts(run)});
  }
  for (Finding& f : *findings) {
    if (!f.evidence.is_object() || !f.evidence.contains("change_point") ||
        !f.evidence.contains("what_changed")) {
      continue;
    }
    nlohmann::json ranked = nlohmann::json::array();
    std::vector<std::pair<double, nlohmann::json>> scored;
    for (const auto& [name, before, after] : Changes(f.evidence["what_changed"])) {
      const std::string old_value = Spelled(before), new_value = Spelled(after);
      int counted = 0, agree = 0;
      for (const Labeled& run : runs) {
        const auto v = run.facts.find(name);
        const std::string value = v == run.facts.end() ? "" : v->second;
        if (value != old_value && value != new_value) continue;
        ++counted;
        agree += (value == new_value) == run.regressed;
      }
      const double alignment = counted ? static_cast<double>(agree) / counted : 0;
      scored.push_back(
          {alignment,
           {{"fact", name}, {"before", before}, {"after", after}, {"alignment", alignment}}});
    }
    std::stable_sort(scored.begin(), scored.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (auto& [score, entry] : scored) ranked.push_back(std::move(entry));
    if (!ranked.empty()) f.evidence["what_changed_ranked"] = std::move(ranked);
  }
}

}  // namespace fabtrack::analyzer
