#include "core/fabric_scan_json.h"

#include <algorithm>
#include <set>
#include <tuple>
#include <utility>

namespace fabtrack {
namespace {

using nlohmann::json;

template <typename T>
json OrNull(const std::optional<T>& v) {
  return v ? json(*v) : json(nullptr);
}

json PortJson(const FabricPort& p, const FabricNode* node) {
  json j = {{"guid", p.node_guid},
            {"description", node ? node->description : ""},
            {"port", p.port},
            {"lid", OrNull(p.lid)},
            {"state", OrNull(p.state)},
            {"phys_state", OrNull(p.phys_state)},
            {"width", OrNull(p.width)},
            {"speed", OrNull(p.speed)},
            {"rate_gbps", OrNull(p.rate_gbps)},
            {"counters", p.counters},
            {"counters_64bit", p.counters_64bit}};
  if (p.counters_missing) j["counters_missing"] = *p.counters_missing;
  return j;
}

// A small reader that remembers the first problem and where it was.
class Reader {
 public:
  explicit Reader(std::string* why) : why_(why) {}
  bool ok() const { return ok_; }
  void Fail(const std::string& where, const std::string& what) {
    if (ok_ && why_) *why_ = where + ": " + what;
    ok_ = false;
  }
  const json* Field(const json& obj, const std::string& where, const char* key, bool required) {
    if (!obj.is_object()) {
      Fail(where, "not an object");
      return nullptr;
    }
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) {
      if (required) Fail(where + "." + key, "missing");
      return nullptr;
    }
    return &*it;
  }
  std::string String(const json& obj, const std::string& where, const char* key,
                     bool required = true) {
    const json* v = Field(obj, where, key, required);
    if (!v) return "";
    if (!v->is_string()) {
      Fail(where + "." + key, "not a string");
      return "";
    }
    return v->get<std::string>();
  }
  std::optional<std::string> OptString(const json& obj, const std::string& where, const char* key) {
    if (!Field(obj, where, key, false)) return std::nullopt;
    return String(obj, where, key);
  }
  std::optional<int64_t> OptInt(const json& obj, const std::string& where, const char* key) {
    const json* v = Field(obj, where, key, false);
    if (!v) return std::nullopt;
    if (!v->is_number_integer()) {
      Fail(where + "." + key, "not an integer");
      return std::nullopt;
    }
    return v->get<int64_t>();
  }
  std::optional<int> OptSmallInt(const json& obj, const std::string& where, const char* key) {
    std::optional<int64_t> v = OptInt(obj, where, key);
    if (!v) return std::nullopt;
    if (*v < 0 || *v > 0xffff) {
      Fail(where + "." + key, "out of range");
      return std::nullopt;
    }
    return static_cast<int>(*v);
  }
  int Int(const json& obj, const std::string& where, const char* key) {
    if (!Field(obj, where, key, true)) return 0;
    return OptSmallInt(obj, where, key).value_or(0);
  }
  std::optional<double> OptDouble(const json& obj, const std::string& where, const char* key) {
    const json* v = Field(obj, where, key, false);
    if (!v) return std::nullopt;
    if (!v->is_number()) {
      Fail(where + "." + key, "not a number");
      return std::nullopt;
    }
    return v->get<double>();
  }
  const json& Array(const json& obj, const std::string& where, const char* key) {
    static const json kEmpty = json::array();
    const json* v = Field(obj, where, key, false);
    if (!v) return kEmpty;
    if (!v->is_array()) {
      Fail(where + "." + key, "not an array");
      return kEmpty;
    }
    return *v;
  }

 private:
  std::string* why_;
  bool ok_ = true;
};

FabricPort ReadPort(Reader& r, const json& j, const std::string& where) {
  FabricPort p;
  p.node_guid = r.String(j, where, "guid");
  p.port = r.Int(j, where, "port");
  p.lid = r.OptSmallInt(j, where, "lid");
  p.state = r.OptString(j, where, "state");
  p.phys_state = r.OptString(j, where, "phys_state");
  p.width = r.OptSmallInt(j, where, "width");
  p.speed = r.OptString(j, where, "speed");
  p.rate_gbps = r.OptDouble(j, where, "rate_gbps");
  if (const json* c = r.Field(j, where, "counters", false)) {
    if (!c->is_object()) {
      r.Fail(where + ".counters", "not an object");
    } else {
      for (const auto& [name, value] : c->items()) {
        if (!value.is_number_unsigned() &&
            !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
          r.Fail(where + ".counters." + name, "not a count");
          break;
        }
        p.counters[name] = value.get<uint64_t>();
      }
    }
  }
  if (const json* b = r.Field(j, where, "counters_64bit", false)) {
    if (!b->is_boolean()) {
      r.Fail(where + ".counters_64bit", "not a boolean");
    } else {
      p.counters_64bit = b->get<bool>();
    }
  }
  p.counters_missing = r.OptString(j, where, "counters_missing");
  return p;
}

FabricLinkEnd ReadEnd(Reader& r, const json& j, const std::string& where) {
  return {r.String(j, where, "guid"), r.String(j, where, "description", false),
          r.Int(j, where, "port")};
}

}  // namespace

json FabricScanToJson(const FabricScan& scan) {
  std::map<std::string, const FabricNode*> nodes;
  for (const FabricNode& n : scan.nodes) nodes[n.guid] = &n;
  std::map<std::pair<std::string, int>, const FabricPort*> ports;
  for (const FabricPort& p : scan.ports) ports[{p.node_guid, p.port}] = &p;
  auto node_of = [&](const std::string& guid) -> const FabricNode* {
    auto it = nodes.find(guid);
    return it == nodes.end() ? nullptr : it->second;
  };

  json j_nodes = json::array();
  for (const FabricNode& n : scan.nodes) {
    j_nodes.push_back({{"guid", n.guid},
                       {"description", n.description},
                       {"type", n.type},
                       {"ports", n.ports},
                       {"lid", OrNull(n.lid)}});
  }
  std::set<std::pair<std::string, int>> linked;
  json j_links = json::array();
  for (const FabricLink& l : scan.links) {
    json link;
    const FabricPort* ends[2] = {nullptr, nullptr};
    int i = 0;
    for (const FabricLinkEnd* e : {&l.a, &l.b}) {
      auto it = ports.find({e->guid, e->port});
      ends[i] = it == ports.end() ? nullptr : it->second;
      json end = ends[i] ? PortJson(*ends[i], node_of(e->guid))
                         : json{{"guid", e->guid}, {"port", e->port}};
      end["description"] = e->description;
      link[i == 0 ? "a" : "b"] = std::move(end);
      linked.insert({e->guid, e->port});
      ++i;
    }
    // The cable's figures are its ends' (equal on a trained link; the lower
    // one if they were ever read apart).
    const FabricPort* shown = ends[0] ? ends[0] : ends[1];
    link["width"] = shown ? OrNull(shown->width) : json(nullptr);
    link["speed"] = shown ? OrNull(shown->speed) : json(nullptr);
    link["rate_gbps"] = shown ? OrNull(shown->rate_gbps) : json(nullptr);
    link["state"] = shown ? OrNull(shown->state) : json(nullptr);
    j_links.push_back(std::move(link));
  }
  json unlinked = json::array();
  for (const FabricPort& p : scan.ports) {
    if (!linked.count({p.node_guid, p.port})) unlinked.push_back(PortJson(p, node_of(p.node_guid)));
  }
  json unanswered = json::array();
  for (const FabricUnanswered& u : scan.unanswered) {
    unanswered.push_back({{"guid", u.guid},
                          {"description", u.description},
                          {"port", OrNull(u.port)},
                          {"what", u.what},
                          {"why", u.why}});
  }
  return {{"scanned_at", scan.scanned_at},
          {"source", scan.source},
          {"duration_s", scan.duration_s},
          {"discovery_s", scan.discovery_s},
          {"mads", {{"sent", scan.mads_sent}, {"retried", scan.mads_retried}}},
          {"nodes", std::move(j_nodes)},
          {"links", std::move(j_links)},
          {"ports_without_link", std::move(unlinked)},
          {"unanswered", std::move(unanswered)}};
}

std::optional<FabricScan> FabricScanFromJson(const json& doc, std::string* why) {
  Reader r(why);
  FabricScan scan;
  if (!doc.is_object()) {
    r.Fail("scan", "not an object");
    return std::nullopt;
  }
  scan.scanned_at = r.String(doc, "scan", "scanned_at");
  scan.source = r.String(doc, "scan", "source", false);
  scan.duration_s = r.OptDouble(doc, "scan", "duration_s").value_or(0);
  scan.discovery_s = r.OptDouble(doc, "scan", "discovery_s").value_or(0);
  if (const json* m = r.Field(doc, "scan", "mads", false)) {
    scan.mads_sent = r.OptInt(*m, "mads", "sent").value_or(0);
    scan.mads_retried = r.OptInt(*m, "mads", "retried").value_or(0);
  }
  const json& nodes = r.Array(doc, "scan", "nodes");
  for (size_t i = 0; i < nodes.size() && r.ok(); ++i) {
    std::string where = "nodes[" + std::to_string(i) + "]";
    FabricNode n;
    n.guid = r.String(nodes[i], where, "guid");
    n.description = r.String(nodes[i], where, "description", false);
    n.type = r.String(nodes[i], where, "type");
    n.ports = r.OptSmallInt(nodes[i], where, "ports").value_or(0);
    n.lid = r.OptSmallInt(nodes[i], where, "lid");
    scan.nodes.push_back(std::move(n));
  }
  std::set<std::pair<std::string, int>> seen;
  auto add_port = [&](FabricPort p, const std::string& where) {
    if (!seen.insert({p.node_guid, p.port}).second) {
      r.Fail(where, "port " + p.node_guid + "/" + std::to_string(p.port) + " listed twice");
      return;
    }
    scan.ports.push_back(std::move(p));
  };
  const json& links = r.Array(doc, "scan", "links");
  for (size_t i = 0; i < links.size() && r.ok(); ++i) {
    std::string where = "links[" + std::to_string(i) + "]";
    FabricLink l;
    const json* a = r.Field(links[i], where, "a", true);
    const json* b = r.Field(links[i], where, "b", true);
    if (!a || !b) break;
    l.a = ReadEnd(r, *a, where + ".a");
    l.b = ReadEnd(r, *b, where + ".b");
    // An end read without its port's figures (counters, state) was a port
    // the scan did not have; only ends with them are ports.
    if (a->contains("counters")) add_port(ReadPort(r, *a, where + ".a"), where + ".a");
    if (b->contains("counters")) add_port(ReadPort(r, *b, where + ".b"), where + ".b");
    scan.links.push_back(std::move(l));
  }
  const json& unlinked = r.Array(doc, "scan", "ports_without_link");
  for (size_t i = 0; i < unlinked.size() && r.ok(); ++i) {
    std::string where = "ports_without_link[" + std::to_string(i) + "]";
    add_port(ReadPort(r, unlinked[i], where), where);
  }
  const json& unanswered = r.Array(doc, "scan", "unanswered");
  for (size_t i = 0; i < unanswered.size() && r.ok(); ++i) {
    std::string where = "unanswered[" + std::to_string(i) + "]";
    FabricUnanswered u;
    u.guid = r.String(unanswered[i], where, "guid", false);
    u.description = r.String(unanswered[i], where, "description", false);
    u.port = r.OptSmallInt(unanswered[i], where, "port");
    u.what = r.String(unanswered[i], where, "what");
    u.why = r.String(unanswered[i], where, "why", false);
    scan.unanswered.push_back(std::move(u));
  }
  if (!r.ok()) return std::nullopt;
  SortFabricScan(scan);
  return scan;
}

}  // namespace fabtrack
