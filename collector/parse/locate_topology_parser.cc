#include "collector/parse/locate_topology_parser.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "core/fabric_scan_json.h"
#include "core/json_instances.h"

namespace fabtrack {
namespace {

std::string_view Trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> words;
  std::istringstream in{std::string(s)};
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// Calls `each(line_number, line)` for every line of `text`.
template <typename F>
void ForEachLine(std::string_view text, F each) {
  int number = 0;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    ++number;
    each(number, text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
}

std::string Where(const std::string& file, int line) { return file + ":" + std::to_string(line); }

}  // namespace

ParsedTopology ParseLocateTopologyFile(std::string_view text, const std::string& file) {
  struct Entry {
    std::string name;
    std::vector<std::string> members;
    int line = 0;
  };
  ParsedTopology out;
  std::vector<Entry> entries;
  std::map<std::string, int> switch_line;
  ForEachLine(text, [&](int number, std::string_view line) {
    line = Trim(line.substr(0, line.find('#')));
    if (line.empty()) return;
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos) {
      out.errors.push_back(Where(file, number) + ": expected \"switch: member member ...\"");
      return;
    }
    Entry e{std::string(Trim(line.substr(0, colon))), Words(line.substr(colon + 1)), number};
    if (e.name.empty() || Words(e.name).size() != 1) {
      out.errors.push_back(Where(file, number) + ": bad switch name '" + e.name + "'");
      return;
    }
    if (e.members.empty()) {
      out.errors.push_back(Where(file, number) + ": switch " + e.name + " has no members");
      return;
    }
    for (const std::string& m : e.members) {
      if (m.find(':') != std::string::npos) {
        out.errors.push_back(Where(file, number) + ": bad member name '" + m + "'");
        return;
      }
    }
    if (auto [it, fresh] = switch_line.emplace(e.name, number); !fresh) {
      out.errors.push_back(Where(file, number) + ": switch " + e.name +
                           " is listed again (first on line " + std::to_string(it->second) + ")");
      return;
    }
    entries.push_back(std::move(e));
  });
  std::set<std::string> spines;
  for (const Entry& e : entries) {
    const auto is_switch = [&](const std::string& m) { return switch_line.count(m) > 0; };
    const size_t switches = std::count_if(e.members.begin(), e.members.end(), is_switch);
    if (switches != 0 && switches != e.members.size()) {
      out.errors.push_back(Where(file, e.line) + ": switch " + e.name +
                           " mixes switches and nodes among its members");
    } else if (switches > 0) {
      spines.insert(e.name);
    }
  }
  std::map<std::string, int> node_line, leaf_line;
  for (const Entry& e : entries) {
    const bool spine = spines.count(e.name) > 0;
    for (const std::string& m : e.members) {
      if (spine) {
        if (spines.count(m)) {
          out.errors.push_back(Where(file, e.line) + ": " + m + " is a spine under spine " +
                               e.name + " (only two tiers: leaves and spines)");
        } else if (auto [it, fresh] = leaf_line.emplace(m, e.line); !fresh) {
          out.errors.push_back(Where(file, e.line) + ": leaf " + m + " is under spine " +
                               out.topology.spine_of[m] + " (line " + std::to_string(it->second) +
                               ") already");
        } else {
          out.topology.spine_of[m] = e.name;
        }
      } else if (auto [it, fresh] = node_line.emplace(m, e.line); !fresh) {
        out.errors.push_back(Where(file, e.line) + ": node " + m + " is under leaf " +
                             out.topology.leaf_of[m] + " (line " + std::to_string(it->second) +
                             ") already");
      } else {
        out.topology.nodes.push_back(m);
        out.topology.leaf_of[m] = e.name;
      }
    }
  }
  if (entries.empty() && out.errors.empty()) {
    out.errors.push_back(Where(file, 1) + ": no switch listed");
  }
  return out;
}

namespace {

// The first "..." of `s` at or after `from`, and where it ends.
std::optional<std::string> Quoted(std::string_view s, size_t from = 0, size_t* end = nullptr) {
  const size_t open = s.find('"', from);
  if (open == std::string_view::npos) return std::nullopt;
  const size_t close = s.find('"', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  if (end) *end = close + 1;
  return std::string(s.substr(open + 1, close - open - 1));
}

bool IsNodeLine(std::string_view line, std::string* type) {
  for (const char* t : {"Switch", "Ca", "Rt"}) {
    const std::string_view tv(t);
    if (line.substr(0, tv.size()) == tv && line.size() > tv.size() &&
        (line[tv.size()] == ' ' || line[tv.size()] == '\t')) {
      *type = t;
      return true;
    }
  }
  return false;
}

struct IbNode {
  std::string type;  // Switch, Ca, Rt
  std::string description;
  std::vector<std::string> peers;  // in port-line order
  int line = 0;
};

// Leaves, spines and hosts from a graph of nodes and their peers (the
// ibnetdiscover text's or a fabric scan's).
void PlaceOnGraph(const std::map<std::string, IbNode>& nodes, const std::vector<std::string>& order,
                  const std::string& file, ParsedTopology* result) {
  ParsedTopology& out = *result;
  auto type_of = [&](const std::string& id) {
    auto it = nodes.find(id);
    if (it != nodes.end()) return it->second.type;
    return std::string(id.starts_with("S-") ? "Switch" : id.starts_with("H-") ? "Ca" : "Rt");
  };
  auto aggregation = [](const IbNode& n) {
    return n.description.find("Aggregation Node") != std::string::npos;
  };
  // Leaves: switches with a CA (not an in-network aggregation node) on a port.
  std::set<std::string> leaves, spines;
  for (const auto& [id, n] : nodes) {
    if (n.type != "Switch") continue;
    for (const std::string& p : n.peers) {
      auto it = nodes.find(p);
      if (type_of(p) == "Ca" && (it == nodes.end() || !aggregation(it->second))) leaves.insert(id);
    }
  }
  for (const auto& [id, n] : nodes) {
    if (n.type != "Switch" || leaves.count(id)) continue;
    for (const std::string& p : n.peers) {
      if (leaves.count(p)) spines.insert(id);
    }
  }
  // Switch names.
  std::map<std::string, int> description_count;
  for (const auto& [id, n] : nodes) {
    if (n.type == "Switch") ++description_count[n.description];
  }
  auto switch_name = [&](const std::string& id) {
    const std::string& d = nodes.at(id).description;
    const size_t semi = d.find(';'), colon = d.find(':', semi == std::string::npos ? 0 : semi);
    if (semi != std::string::npos && colon != std::string::npos && colon > semi + 1) {
      return d.substr(semi + 1, colon - semi - 1);
    }
    if (!d.empty() && description_count[d] == 1 && Words(d).size() == 1) return d;
    return id;
  };
  for (const std::string& leaf : leaves) {
    std::set<std::string> up;
    for (const std::string& p : nodes.at(leaf).peers) {
      if (spines.count(p)) up.insert(switch_name(p));
    }
    if (!up.empty()) out.topology.spine_of[switch_name(leaf)] = *up.begin();
  }
  for (const std::string& id : order) {
    const IbNode& n = nodes.at(id);
    if (n.type != "Ca" || aggregation(n)) continue;
    std::vector<std::string> words = Words(n.description);
    const std::string host = words.empty() ? id : words.front();
    if (out.topology.leaf_of.count(host)) continue;  // another HCA of a host already placed
    std::string leaf;
    for (const std::string& p : n.peers) {
      if (leaves.count(p)) {
        leaf = switch_name(p);
        break;
      }
    }
    if (leaf.empty()) {
      out.errors.push_back(Where(file, n.line) + ": Ca " + id + " (" + host +
                           ") is linked to no switch");
      continue;
    }
    out.topology.nodes.push_back(host);
    out.topology.leaf_of[host] = leaf;
  }
  if (out.topology.nodes.empty() && out.errors.empty()) {
    out.errors.push_back(Where(file, 1) + ": no Ca linked to a switch found");
  }
}

}  // namespace

bool LooksLikeIbnetdiscover(std::string_view text) {
  bool found = false;
  ForEachLine(text, [&](int, std::string_view line) {
    line = Trim(line);
    std::string type;
    if (line.starts_with("switchguid=") || line.starts_with("caguid=")) found = true;
    if (IsNodeLine(line, &type) && type != "Rt") {
      auto id = Quoted(line);
      if (id && id->size() > 2 && ((*id)[0] == 'S' || (*id)[0] == 'H') && (*id)[1] == '-') {
        found = true;
      }
    }
  });
  return found;
}

ParsedTopology ParseIbnetdiscover(std::string_view text, const std::string& file) {
  ParsedTopology out;
  std::map<std::string, IbNode> nodes;
  std::vector<std::string> order;
  std::string current;
  ForEachLine(text, [&](int number, std::string_view raw) {
    std::string_view line = Trim(raw);
    std::string type;
    if (line.empty() || line.front() == '#') return;
    if (IsNodeLine(line, &type)) {
      size_t end = 0;
      auto id = Quoted(line, 0, &end);
      if (!id || id->empty()) {
        out.errors.push_back(Where(file, number) + ": " + type + " line without a \"guid\" name");
        current.clear();
        return;
      }
      const size_t hash = line.find('#', end);
      IbNode node{type, "", {}, number};
      if (hash != std::string_view::npos) node.description = Quoted(line, hash).value_or("");
      current = *id;
      if (nodes.emplace(current, node).second) order.push_back(current);
      return;
    }
    if (line.front() == '[') {
      if (current.empty()) {
        out.errors.push_back(Where(file, number) + ": port line outside a Switch or Ca block");
        return;
      }
      // The peer is the first quoted name before the comment.
      const std::string_view before = line.substr(0, line.find('#'));
      if (auto peer = Quoted(before)) nodes[current].peers.push_back(*peer);
      return;
    }
    // vendid=, devid=, sysimgguid=, switchguid=, caguid=, and anything else: a new block.
    if (line.find('=') != std::string_view::npos) current.clear();
  });
  PlaceOnGraph(nodes, order, file, &out);
  return out;
}

ParsedTopology ParseFabricScanTopology(const FabricScan& scan, const std::string& file) {
  ParsedTopology out;
  std::map<std::string, IbNode> nodes;
  std::vector<std::string> order;
  std::map<std::string, std::string> id_of;  // GUID -> "S-<guid>" | "H-<guid>"
  for (const FabricNode& n : scan.nodes) {
    const std::string type = n.type == "switch" ? "Switch" : n.type == "ca" ? "Ca" : "Rt";
    const std::string id = (type == "Switch" ? "S-" : type == "Ca" ? "H-" : "R-") + n.guid;
    id_of[n.guid] = id;
    nodes.emplace(id, IbNode{type, n.description, {}, 1});
    order.push_back(id);
  }
  for (const FabricLink& l : scan.links) {
    auto a = id_of.find(l.a.guid), b = id_of.find(l.b.guid);
    if (a == id_of.end() || b == id_of.end()) continue;
    nodes[a->second].peers.push_back(b->second);
    nodes[b->second].peers.push_back(a->second);
  }
  PlaceOnGraph(nodes, order, file, &out);
  return out;
}

ParsedTopology ParseTopology(std::string_view text, const std::string& file) {
  const size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string_view::npos && text[first] == '{') {
    ParsedTopology out;
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    std::string why = "not JSON";
    std::optional<FabricScan> scan =
        doc.is_discarded() ? std::nullopt : FabricScanFromJson(doc, &why);
    if (!scan) {
      out.errors.push_back(file +
                           ":1: not a `fabtrack fabric scan --format json` document: " + why);
      return out;
    }
    return ParseFabricScanTopology(*scan, file);
  }
  return LooksLikeIbnetdiscover(text) ? ParseIbnetdiscover(text, file)
                                      : ParseLocateTopologyFile(text, file);
}

std::string FormatLocateTopology(const LocateTopology& topology) {
  std::vector<std::string> leaves;
  std::map<std::string, std::vector<std::string>> members, under;
  std::vector<std::string> loose;
  for (const std::string& node : topology.nodes) {
    auto it = topology.leaf_of.find(node);
    if (it == topology.leaf_of.end()) {
      loose.push_back(node);
      continue;
    }
    if (!members.count(it->second)) leaves.push_back(it->second);
    members[it->second].push_back(node);
  }
  std::string out;
  for (const std::string& leaf : leaves) {
    out += leaf + ":";
    for (const std::string& n : members[leaf]) out += " " + n;
    out += "\n";
  }
  std::vector<std::string> spines;
  for (const std::string& leaf : leaves) {
    auto it = topology.spine_of.find(leaf);
    if (it == topology.spine_of.end()) continue;
    if (!under.count(it->second)) spines.push_back(it->second);
    under[it->second].push_back(leaf);
  }
  for (const std::string& spine : spines) {
    out += spine + ":";
    for (const std::string& l : under[spine]) out += " " + l;
    out += "\n";
  }
  if (!loose.empty()) {
    out += "# on no leaf:";
    for (const std::string& n : loose) out += " " + n;
    out += "\n";
  }
  return out;
}

}  // namespace fabtrack
