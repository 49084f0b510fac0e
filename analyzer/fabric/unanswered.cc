// What did not answer this scan: a node whose PMA stayed silent (critical:
// none of its counters are known), a port whose counters did not come, a
// LinkUp switch port with no node found behind it. Needs no previous scan.
#include <map>
#include <sstream>

#include "analyzer/fabric/fabric_window.h"

namespace fabtrack::fabric_analysis {

void JudgeUnanswered(const FabricWindow& w, const FabricThresholds&, std::vector<Finding>& out) {
  std::map<std::string, std::vector<const FabricUnanswered*>> by_node;
  for (const FabricUnanswered& u : w.current->unanswered) by_node[u.guid].push_back(&u);
  for (const auto& [guid, items] : by_node) {
    const FabricUnanswered& first = *items.front();
    std::string name = first.description.empty() ? guid : first.description;
    for (const FabricUnanswered* u : items) {
      if (u->what != "discovery") continue;
      Finding f;
      f.kind = "fabric_unanswered";
      f.severity = Severity::kCritical;
      f.subject = name + "/" + std::to_string(u->port.value_or(0));
      f.message = f.subject + " is LinkUp but the node behind it did not answer discovery";
      f.evidence = {{"guid", guid},
                    {"description", first.description},
                    {"port", u->port.value_or(0)},
                    {"what", u->what},
                    {"why", u->why}};
      out.push_back(std::move(f));
    }
    std::vector<const FabricUnanswered*> pma;
    for (const FabricUnanswered* u : items) {
      if (u->what != "discovery") pma.push_back(u);
    }
    if (pma.empty()) continue;
    bool whole_node = false;
    nlohmann::json what = nlohmann::json::array();
    for (const FabricUnanswered* u : pma) {
      if (u->what == "ClassPortInfo") whole_node = true;
      what.push_back({{"what", u->what},
                      {"port", u->port ? nlohmann::json(*u->port) : nlohmann::json()},
                      {"why", u->why}});
    }
    Finding f;
    f.kind = "fabric_unanswered";
    f.severity = whole_node ? Severity::kCritical : Severity::kWarning;
    f.subject = name;
    std::ostringstream msg;
    if (whole_node) {
      msg << name << " (" << guid << ") did not answer: " << pma.front()->why
          << "; none of its port counters are known";
    } else {
      msg << name << " (" << guid << "): " << pma.size() << " counter read(s) unanswered, first "
          << pma.front()->what << " of port " << pma.front()->port.value_or(0) << ": "
          << pma.front()->why;
    }
    f.message = msg.str();
    f.value = static_cast<double>(pma.size());
    f.evidence = {{"guid", guid}, {"description", first.description}, {"unanswered", what}};
    out.push_back(std::move(f));
  }
}

}  // namespace fabtrack::fabric_analysis
