#include "analyzer/fabric/run_uplinks.h"

#include <map>

namespace fabtrack::fabric_analysis {
namespace {

// The run_fabric detector's findings keep the subnet scan's kinds.
bool IsFabricKind(const std::string& kind) { return kind.rfind("fabric_", 0) == 0; }

bool IsRunUplinkFinding(const Finding& f) {
  return IsFabricKind(f.kind) && f.run_id && f.evidence.contains("window") &&
         f.evidence.value("tier", "") == "switch-switch";
}

}  // namespace

void CiteRunUplinks(std::vector<Finding>* findings) {
  std::map<int64_t, std::vector<const Finding*>> uplinks;
  for (const Finding& f : *findings) {
    if (IsRunUplinkFinding(f)) uplinks[*f.run_id].push_back(&f);
  }
  if (uplinks.empty()) return;
  std::map<int64_t, nlohmann::json> cited;
  std::map<int64_t, std::string> sentence;
  for (const auto& [run_id, list] : uplinks) {
    nlohmann::json items = nlohmann::json::array();
    std::string text;
    for (const Finding* u : list) {
      items.push_back({{"kind", u->kind},
                       {"link", u->subject},
                       {"a", u->evidence.value("a", nlohmann::json())},
                       {"b", u->evidence.value("b", nlohmann::json())},
                       {"message", u->message}});
      text += (text.empty() ? "" : "; ") + u->kind + " on uplink " + u->subject;
    }
    cited[run_id] = std::move(items);
    sentence[run_id] = text;
  }
  for (Finding& f : *findings) {
    if (!f.run_id || IsFabricKind(f.kind)) continue;
    auto it = cited.find(*f.run_id);
    if (it == cited.end()) continue;
    f.evidence["fabric_uplinks"] = it->second;
    f.message += " (during the run: " + sentence[*f.run_id] + ")";
  }
}

}  // namespace fabtrack::fabric_analysis
