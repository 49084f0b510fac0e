#include "collector/harness/pair_probe.h"

#include <set>

#include "core/json_instances.h"
#include "core/text.h"

namespace fabtrack::harness {

std::optional<std::vector<ProbePair>> ParseProbePairs(const std::string& text) {
  std::vector<ProbePair> pairs;
  std::set<std::string> seen;
  for (const std::string_view item : Split(text, ',')) {
    const size_t colon = item.find(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == item.size() ||
        item.find(':', colon + 1) != std::string::npos) {
      return std::nullopt;
    }
    ProbePair p{std::string(item.substr(0, colon)), std::string(item.substr(colon + 1))};
    if (!seen.insert(p.a).second || !seen.insert(p.b).second) return std::nullopt;
    pairs.push_back(std::move(p));
  }
  if (pairs.empty()) return std::nullopt;
  return pairs;
}

std::string FormatProbePairs(const std::vector<ProbePair>& pairs) {
  std::string out;
  for (const ProbePair& p : pairs) out += (out.empty() ? "" : ",") + p.a + ":" + p.b;
  return out;
}

std::string PairProbeResultsToJson(const PairProbeResults& r) {
  nlohmann::json doc = {{"kind", "fabtrack-pair-probe"},
                        {"bytes", r.bytes},
                        {"iters", r.iters},
                        {"probes", nlohmann::json::array()}};
  for (const OneWayProbe& p : r.probes) {
    doc["probes"].push_back({{"from", p.from},
                             {"to", p.to},
                             {"busbw_gbps", p.busbw_gbps},
                             {"latency_us", p.latency_us}});
  }
  return doc.dump() + "\n";
}

std::optional<PairProbeResults> PairProbeResultsFromJson(const std::string& text,
                                                         std::string* why) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
  if (doc.is_discarded() || !doc.is_object()) {
    *why = "not JSON";
    return std::nullopt;
  }
  if (doc.value("kind", "") != "fabtrack-pair-probe") {
    *why = "not a fabtrack-pair-probe result";
    return std::nullopt;
  }
  PairProbeResults r;
  try {
    r.bytes = doc.at("bytes").get<int64_t>();
    r.iters = doc.at("iters").get<int>();
    for (const auto& p : doc.at("probes")) {
      r.probes.push_back({p.at("from").get<std::string>(), p.at("to").get<std::string>(),
                          p.at("busbw_gbps").get<double>(), p.at("latency_us").get<double>()});
    }
  } catch (const nlohmann::json::exception& e) {
    *why = e.what();
    return std::nullopt;
  }
  return r;
}

bool SameHost(const std::string& a, const std::string& b) {
  if (a == b) return true;
  return a.substr(0, a.find('.')) == b.substr(0, b.find('.'));
}

}  // namespace fabtrack::harness
