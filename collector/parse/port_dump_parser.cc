#include "collector/parse/port_dump_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <deque>
#include <map>
#include <set>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/port_dump_sections.h"
#include "collector/parse/sysfs_values.h"
#include "core/text.h"

namespace fabtrack {
namespace {

std::vector<std::string_view> Lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// A value of one or more words without the note a how-to or book writes
// after it ("Active   # logical state ...", "7   # from the subnet manager"):
// no tool's value holds a '#' at its start or after a blank, so one there
// begins a note.
std::string_view ValueBeforeNote(std::string_view value) {
  for (size_t i = 0; i < value.size(); ++i) {
    if (value[i] == '#' && (i == 0 || value[i - 1] == ' ' || value[i - 1] == '\t')) {
      return TrimBlanks(value.substr(0, i));
    }
  }
  return value;
}

// "key: value" (ibstat, ibstatus, ibv_devinfo) or perfquery's
// "Key:.......value": the key and the value, trimmed and without a note;
// false without a colon.
bool KeyValue(std::string_view line, std::string_view* key, std::string_view* value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *key = TrimBlanks(line.substr(0, colon));
  std::string_view v = line.substr(colon + 1);
  while (!v.empty() && v.front() == '.') v.remove_prefix(1);
  *value = ValueBeforeNote(TrimBlanks(v));
  return true;
}

// A value as stored: an empty one ("Base lid:" with nothing after) is
// absent, not "", and so is one blanked out before posting ("Node GUID:
// ...", "node_guid: -", "xxxx:xxxx:xxxx:xxxx"): no letter or digit but x.
std::optional<std::string> Text(std::string_view value) {
  if (value.empty()) return std::nullopt;
  const bool redacted = std::none_of(value.begin(), value.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) && c != 'x' && c != 'X';
  });
  if (redacted) return std::nullopt;
  return std::string(value);
}

// A link layer is one word (InfiniBand, Ethernet); what follows it on the
// line is a note the one who saved the dump wrote (a blog's "Ethernet
// (IP mode)" in its own language), not part of the value.
std::optional<std::string> LinkLayer(std::string_view value) {
  const size_t end = value.find_first_of(" \t");
  return Text(value.substr(0, end));
}

std::optional<uint64_t> Unsigned(std::string_view text) {
  uint64_t v = 0;
  int base = 10;
  if (text.starts_with("0x")) {
    text.remove_prefix(2);
    base = 16;
  }
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v, base);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return v;
}

std::optional<double> Number(std::string_view text) {
  double v = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
  if (ec != std::errc() || end == text.data()) return std::nullopt;
  return v;
}

// The codes of the IBA PortState and PortPhysicalState, as sysfs prints them.
const std::map<std::string, std::pair<int, std::string>, std::less<>>& States() {
  static const std::map<std::string, std::pair<int, std::string>, std::less<>> m = {
      {"down", {1, "DOWN"}},     {"initializing", {2, "INIT"}},
      {"init", {2, "INIT"}},     {"armed", {3, "ARMED"}},
      {"active", {4, "ACTIVE"}}, {"active_defer", {5, "ACTIVE_DEFER"}}};
  return m;
}
const std::map<std::string, std::pair<int, std::string>, std::less<>>& PhysStates() {
  static const std::map<std::string, std::pair<int, std::string>, std::less<>> m = {
      {"sleep", {1, "Sleep"}},
      {"polling", {2, "Polling"}},
      {"disabled", {3, "Disabled"}},
      {"portconfigurationtraining", {4, "PortConfigurationTraining"}},
      {"linkup", {5, "LinkUp"}},
      {"link_up", {5, "LinkUp"}},
      {"linkerrorrecovery", {6, "LinkErrorRecovery"}},
      {"phytest", {7, "Phy Test"}}};
  return m;
}

std::string Lower(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c != ' ') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// ibstat "Active", ibstatus "4: ACTIVE", ibv_devinfo "PORT_ACTIVE (4)".
void SetState(std::string_view text, bool physical, PortSample* p) {
  std::string word(TrimBlanks(text));
  if (size_t colon = word.find(':'); colon != std::string::npos) word = word.substr(colon + 1);
  if (size_t paren = word.find('('); paren != std::string::npos) word = word.substr(0, paren);
  std::string key = Lower(TrimBlanks(word));
  if (key.starts_with("port_")) key = key.substr(5);
  const auto& table = physical ? PhysStates() : States();
  auto it = table.find(key);
  if (it == table.end()) {
    (physical ? p->phys_state : p->state) = Text(TrimBlanks(word));
    return;
  }
  (physical ? p->phys_state_code : p->state_code) = it->second.first;
  (physical ? p->phys_state : p->state) = it->second.second;
}

// The keys under which ibstat, ibstatus and ibv_devinfo print a port's state,
// physical state, rate, LID and link layer (ibv_devinfo prints no rate: it is
// made of active_width and active_speed).
struct PortKeys {
  std::string_view state, phys_state, rate, lid, link_layer;
};
constexpr PortKeys kIbstatKeys{"State", "Physical state", "Rate", "Base lid", "Link layer"};
constexpr PortKeys kIbstatusKeys{"state", "phys state", "rate", "base lid", "link_layer"};
constexpr PortKeys kIbvDevinfoKeys{"state", "phys_state", "", "port_lid", "link_layer"};

// One "key: value" line of a port block, where it is one of `keys`.
void SetPortField(std::string_view key, std::string_view value, const PortKeys& keys,
                  PortSample* port) {
  if (key == keys.state) SetState(value, false, port);
  if (key == keys.phys_state) SetState(value, true, port);
  if (!keys.rate.empty() && key == keys.rate) {
    port->rate_gbps = Number(value);
    port->rate_text = Text(value);
  }
  if (key == keys.lid) port->lid = Text(value);
  if (key == keys.link_layer) port->link_layer = LinkLayer(value);
}

// perfquery's attribute names and the sysfs counters/ names they are.
const std::map<std::string, std::string, std::less<>>& PerfqueryNames() {
  static const std::map<std::string, std::string, std::less<>> m = {
      {"PortXmitData", "port_xmit_data"},
      {"PortRcvData", "port_rcv_data"},
      {"PortXmitPkts", "port_xmit_packets"},
      {"PortRcvPkts", "port_rcv_packets"},
      {"PortUnicastXmitPkts", "unicast_xmit_packets"},
      {"PortUnicastRcvPkts", "unicast_rcv_packets"},
      {"PortMulticastXmitPkts", "multicast_xmit_packets"},
      {"PortMulticastRcvPkts", "multicast_rcv_packets"},
      {"SymbolErrorCounter", "symbol_error"},
      {"LinkErrorRecoveryCounter", "link_error_recovery"},
      {"LinkDownedCounter", "link_downed"},
      {"PortRcvErrors", "port_rcv_errors"},
      {"PortRcvRemotePhysicalErrors", "port_rcv_remote_physical_errors"},
      {"PortRcvSwitchRelayErrors", "port_rcv_switch_relay_errors"},
      {"PortXmitDiscards", "port_xmit_discards"},
      {"PortXmitConstraintErrors", "port_xmit_constraint_errors"},
      {"PortRcvConstraintErrors", "port_rcv_constraint_errors"},
      {"LocalLinkIntegrityErrors", "local_link_integrity_errors"},
      {"ExcessiveBufferOverrunErrors", "excessive_buffer_overrun_errors"},
      {"VL15Dropped", "VL15_dropped"},
      {"PortXmitWait", "port_xmit_wait"},
  };
  return m;
}

std::string Quoted(std::string_view line) {
  size_t a = line.find('\'');
  size_t b = a == std::string_view::npos ? a : line.find('\'', a + 1);
  return b == std::string_view::npos ? "" : std::string(line.substr(a + 1, b - a - 1));
}

// What one tool's section gave: its ports and the line each began at.
struct SectionPorts {
  std::vector<PortSample> ports;
  std::vector<int> lines;
  std::vector<PortDumpError>* errors = nullptr;
  std::vector<std::string>* notes = nullptr;

  PortSample* Add(int line) {
    lines.push_back(line);
    return &ports.emplace_back();
  }
  void Error(int line, std::string message) { errors->push_back({line, std::move(message)}); }
};

// A block of a tool's output (a port, an HCA) and the keys read in it, to
// tell a block cut short from a whole one.
struct Block {
  std::string what;  // "mlx5_0 port 1"
  int first = 0, last = 0;
  std::set<std::string, std::less<>> keys;
};

// Blocks of one kind in one section: each must have `required` and one of
// `one_of` (when given), and the last one (where a cut dump ends) every key
// the earlier ones all had. The line named is the block's last, or the line
// that broke the section when the last block is the one that ends there.
void CheckBlocks(const std::vector<Block>& blocks, const std::vector<std::string_view>& required,
                 const char* tool, const DumpSection& section, SectionPorts* out,
                 const std::vector<std::string_view>& one_of = {}) {
  std::optional<std::set<std::string, std::less<>>> common;
  for (size_t b = 0; b < blocks.size(); ++b) {
    const Block& block = blocks[b];
    const bool last = b + 1 == blocks.size();
    std::vector<std::string> missing;
    for (std::string_view k : required) {
      if (!block.keys.contains(k)) missing.emplace_back(k);
    }
    const bool no_end =
        !one_of.empty() && std::none_of(one_of.begin(), one_of.end(),
                                        [&](std::string_view k) { return block.keys.contains(k); });
    if (no_end) {
      std::string either;
      for (std::string_view k : one_of) either += (either.empty() ? "" : " or ") + std::string(k);
      missing.push_back(either);
    }
    if (last && common && blocks.size() > 1) {
      for (const std::string& k : *common) {
        // An end line already named as "Port GUID or Link layer" is not named
        // again; one of them read, the other one the blocks above all have
        // is missing like any key (ended at Port GUID, where the others go
        // on to Link layer).
        const bool named_as_end =
            no_end && std::find(one_of.begin(), one_of.end(), k) != one_of.end();
        if (!block.keys.contains(k) && !named_as_end &&
            std::find(missing.begin(), missing.end(), k) == missing.end()) {
          missing.push_back(k);
        }
      }
    }
    if (!missing.empty()) {
      std::string names;
      for (const std::string& m : missing) names += (names.empty() ? "" : ", ") + m;
      const bool broken = last && section.broken_by != 0;
      out->Error(broken ? section.broken_by : block.last,
                 std::string(tool) + " block of " + block.what + " (from line " +
                     std::to_string(block.first) + ") ends without " + names +
                     (last ? ": the dump is cut off" : ""));
    }
    if (!common) {
      common = block.keys;
    } else {
      std::erase_if(*common, [&](const std::string& k) { return !block.keys.contains(k); });
    }
  }
}

// A port block of `device` beginning at `line`: its sample and its Block.
PortSample* StartPort(int line, const std::string& device, uint64_t number, SectionPorts* out,
                      std::vector<Block>* blocks) {
  PortSample* port = out->Add(line);
  port->device = device;
  port->port = static_cast<int>(number);
  blocks->push_back({device + " port " + std::to_string(number), line, line, {}});
  return port;
}

// Each HCA block (ibstat's CA, ibv_devinfo's hca_id) against the ports it
// said it has (`said`, one where it did not say): fewer port blocks than
// that (`seen`) is a dump cut short.
void CheckPortCounts(const std::vector<Block>& hcas,
                     const std::vector<std::optional<uint64_t>>& said, const std::vector<int>& seen,
                     const char* tool, const DumpSection& section, SectionPorts* out) {
  for (size_t h = 0; h < hcas.size(); ++h) {
    const uint64_t want = said[h].value_or(1);
    if (static_cast<uint64_t>(seen[h]) >= want) continue;
    const bool last = h + 1 == hcas.size();
    out->Error(last && section.broken_by ? section.broken_by : hcas[h].last,
               std::string(tool) + " block of " + hcas[h].what + " (from line " +
                   std::to_string(hcas[h].first) + ") has " + std::to_string(seen[h]) + " of its " +
                   std::to_string(want) + " port block(s)" + (last ? ": the dump is cut off" : ""));
  }
}

void ParseIbstat(const DumpSection& section, SectionPorts* out) {
  std::string device;
  std::optional<std::string> fw, guid;
  PortSample* port = nullptr;
  std::vector<Block> cas, ports;
  std::vector<std::optional<uint64_t>> said;  // each CA's "Number of ports"
  std::vector<int> seen;
  for (const DumpLine& l : section.lines) {
    std::string_view line = TrimBlanks(l.text);
    if (line.empty()) continue;
    std::string_view key, value;
    if (line.starts_with("CA '")) {
      device = Quoted(line);
      fw.reset();
      guid.reset();
      port = nullptr;
      cas.push_back({"CA '" + device + "'", l.number, l.number, {}});
      said.emplace_back();
      seen.push_back(0);
      continue;
    }
    if (!cas.empty()) cas.back().last = l.number;
    if (line.starts_with("Port ") && line.ends_with(":") && !device.empty()) {
      std::optional<uint64_t> n = Unsigned(TrimBlanks(line.substr(5, line.size() - 6)));
      if (!n) {
        out->Error(l.number, "bad port number: " + std::string(line));
        port = nullptr;
        continue;
      }
      port = StartPort(l.number, device, *n, out, &ports);
      port->fw_version = fw;
      port->node_guid = guid;
      ++seen.back();
    } else if (KeyValue(line, &key, &value)) {
      if (key == "Firmware version") fw = Text(value);
      if (key == "Node GUID") guid = Text(value);
      if (key == "Number of ports" && !said.empty()) said.back() = Unsigned(value);
      if (!port) continue;
      ports.back().last = l.number;
      ports.back().keys.insert(std::string(key));
      SetPortField(key, value, kIbstatKeys, port);
    }
  }
  // A block ends with its Port GUID (older ibstat) or Link layer: one holding
  // either was not cut, even when a how-to left lines out above it.
  CheckBlocks(ports, {"State", "Physical state", "Rate"}, "ibstat", section, out,
              {"Port GUID", "Link layer"});
  CheckPortCounts(cas, said, seen, "ibstat", section, out);
}

void ParseIbstatus(const DumpSection& section, SectionPorts* out) {
  PortSample* port = nullptr;
  std::vector<Block> blocks;
  for (const DumpLine& l : section.lines) {
    std::string_view line = TrimBlanks(l.text);
    if (line.empty()) continue;
    std::string_view key, value;
    if (line.starts_with("Infiniband device '")) {
      size_t at = line.find(" port ");
      auto number = at == std::string_view::npos ? std::nullopt : Unsigned(line.substr(at + 6));
      if (!number) {
        out->Error(l.number, "no port number: " + std::string(line));
        port = nullptr;
        continue;
      }
      port = StartPort(l.number, Quoted(line), *number, out, &blocks);
    } else if (port && KeyValue(line, &key, &value)) {
      blocks.back().last = l.number;
      blocks.back().keys.insert(std::string(key));
      SetPortField(key, value, kIbstatusKeys, port);
    }
  }
  CheckBlocks(blocks, {"state", "phys state", "rate"}, "ibstatus", section, out);
}

// The HCA of a perfquery block: the caller's, else the kept command line's
// "-C mlx5_0", else "lid" and the LID.
std::optional<std::string> PerfqueryDevice(const std::optional<std::string>& command) {
  if (!command) return std::nullopt;
  if (size_t c = command->find(" -C "); c != std::string::npos) {
    std::string_view rest = TrimBlanks(std::string_view(*command).substr(c + 4));
    return std::string(rest.substr(0, rest.find(' ')));
  }
  return std::nullopt;
}

void ParsePerfquery(const DumpSection& section, const std::optional<std::string>& device,
                    SectionPorts* out) {
  std::optional<std::string> named = device;
  if (!named) named = PerfqueryDevice(section.command);
  PortSample* port = nullptr;
  std::vector<Block> blocks;
  std::vector<std::vector<std::string_view>> required;
  std::vector<bool> extended_block;
  for (const DumpLine& l : section.lines) {
    std::string_view line = TrimBlanks(l.text);
    if (line.empty()) continue;
    std::string_view key, value;
    if (line.starts_with("#")) {
      // The command line, when the dump kept it as a comment.
      if (line.find("perfquery") != std::string_view::npos && !device) {
        if (auto d = PerfqueryDevice(std::string(line))) named = d;
      }
      if (!line.starts_with("# Port") || line.find("counters:") == std::string_view::npos)
        continue;  // a comment of the one who saved it
      port = nullptr;
      const bool extended = line.starts_with("# Port extended counters:");
      if (!extended && !line.starts_with("# Port counters:")) {
        out->notes->push_back("line " + std::to_string(l.number) + ": perfquery's " +
                              std::string(line.substr(2, line.find(':') - 2)) +
                              " are not read (only PortCounters and PortCountersExtended)");
        continue;
      }
      size_t at = line.find(" port ");
      auto number = at == std::string_view::npos ? std::nullopt : Unsigned(line.substr(at + 6));
      port = out->Add(l.number);
      port->port = static_cast<int>(number.value_or(0));
      if (size_t lid = line.find("Lid "); lid != std::string_view::npos) {
        std::string_view rest = line.substr(lid + 4);
        port->lid = Text(rest.substr(0, rest.find(' ')));
      }
      port->device = named.value_or("lid" + port->lid.value_or("?"));
      blocks.push_back({port->device + " port " + std::to_string(port->port) + " (Lid " +
                            port->lid.value_or("?") + ")",
                        l.number,
                        l.number,
                        {}});
      // The last counter perfquery always prints of the attribute
      // (PortCounters' PortXmitWait only where the port supports it); more
      // below as the block shows which ranges it prints.
      required.push_back({"PortRcvPkts"});
      extended_block.push_back(extended);
      continue;
    }
    if (!port || !KeyValue(line, &key, &value)) continue;
    blocks.back().last = l.number;
    blocks.back().keys.insert(std::string(key));
    // perfquery prints fields in ranges: PortCountersExtended's unicast and
    // multicast packets (where the PMA has them) up to PortMulticastRcvPkts,
    // its error counters after CounterSelect2 up to PortXmitWait (and
    // QP1Dropped where known).
    if (extended_block.back() && key == "PortUnicastXmitPkts")
      required.back().push_back("PortMulticastRcvPkts");
    if (extended_block.back() && key == "CounterSelect2") required.back().push_back("PortXmitWait");
    auto name = PerfqueryNames().find(key);
    if (name == PerfqueryNames().end()) continue;  // PortSelect, CounterSelect, ...
    auto v = Unsigned(value);
    if (!v) {
      out->Error(l.number, std::string(key) + ": not a counter value: " + std::string(value));
      continue;
    }
    port->counters[name->second] = *v;
  }
  const size_t errors_before = out->errors->size();
  for (size_t b = 0; b < blocks.size(); ++b) {
    DumpSection only = section;
    if (b + 1 < blocks.size()) only.broken_by = 0;
    CheckBlocks({blocks[b]}, required[b], "perfquery", only, out);
  }
  // The last block against the others: a cut after a counter they all have.
  if (out->errors->size() == errors_before) CheckBlocks(blocks, {}, "perfquery", section, out);
  // As the live reader finishes a port (the same code): legacy counters at
  // their width's maximum are saturated (PortXmitWait and the error counters
  // of PortCounters, which `perfquery -x` prints beside the 64-bit extended
  // data counters; plain perfquery's 32-bit data counters too), data words
  // as bytes.
  for (PortSample& p : out->ports) FinishSysfsPort({}, &p);
}

// The port a kept `ibv_devinfo ... -i N` (`--ib-port=N`) command asked
// for: each HCA then prints that port's block only, whatever its
// phys_port_cnt says.
std::optional<uint64_t> IbvDevinfoPortAsked(const std::optional<std::string>& command) {
  if (!command || !command->starts_with("ibv_devinfo ")) return std::nullopt;
  std::string_view rest = *command;
  while (!rest.empty()) {
    rest = TrimBlanks(rest);
    std::string_view word = rest.substr(0, rest.find(' '));
    rest.remove_prefix(word.size());
    if (word == "-i" || word == "--ib-port") {
      rest = TrimBlanks(rest);
      return Unsigned(rest.substr(0, rest.find(' ')));
    }
    if (word.starts_with("--ib-port=")) return Unsigned(word.substr(10));
    if (word.starts_with("-i") && word.size() > 2) return Unsigned(word.substr(2));
  }
  return std::nullopt;
}

void ParseIbvDevinfo(const DumpSection& section, SectionPorts* out) {
  std::string device;
  std::optional<std::string> fw, guid, board;
  PortSample* port = nullptr;
  int width = 0;
  // -1 until the port's active_speed is read (a plain double: GCC 12 takes an
  // optional<double> here for maybe-uninitialized once the lambda is inlined).
  double lane_gbps = -1;
  bool verbose = false;
  std::vector<Block> hcas, ports;
  std::vector<std::optional<uint64_t>> said;
  std::vector<int> seen;
  auto finish_rate = [&] {
    if (port && width > 0 && lane_gbps >= 0) port->rate_gbps = width * lane_gbps;
  };
  for (const DumpLine& l : section.lines) {
    std::string_view line = TrimBlanks(l.text);
    if (line.empty()) continue;
    if (!hcas.empty()) hcas.back().last = l.number;
    std::string_view key, value;
    if (!KeyValue(line, &key, &value)) {
      if (port) ports.back().last = l.number;
      continue;
    }
    if (key == "hca_id") {
      finish_rate();
      device = std::string(value);
      fw.reset();
      guid.reset();
      board.reset();
      port = nullptr;
      hcas.push_back({"hca_id " + device, l.number, l.number, {}});
      said.emplace_back();
      seen.push_back(0);
    } else if (key == "fw_ver") {
      fw = Text(value);
    } else if (key == "node_guid") {
      guid = Text(value);
    } else if (key == "board_id") {
      board = Text(value);
    } else if (key == "phys_port_cnt" && !said.empty()) {
      said.back() = Unsigned(value);
    } else if (key == "max_mr_size") {
      verbose = true;  // -v: the port blocks end with width, speed and phys_state
    } else if (key == "port" && !device.empty()) {
      finish_rate();
      std::optional<uint64_t> n = Unsigned(value);
      port = nullptr;
      width = 0;
      lane_gbps = -1;
      if (!n) {
        out->Error(l.number, "bad port number");
        continue;
      }
      port = StartPort(l.number, device, *n, out, &ports);
      port->fw_version = fw;
      port->node_guid = guid;
      port->board_id = board;
      ++seen.back();
    } else if (port) {
      ports.back().last = l.number;
      if (!key.starts_with("GID")) ports.back().keys.insert(std::string(key));
      SetPortField(key, value, kIbvDevinfoKeys, port);
      if (key == "active_width") width = static_cast<int>(Unsigned(value).value_or(0));  // "4X (2)"
      if (key == "active_speed") lane_gbps = Number(value).value_or(-1);  // "25.0 Gbps (32)"
    }
  }
  finish_rate();
  std::vector<std::string_view> required = {"state", "link_layer"};
  if (verbose) required.insert(required.end(), {"active_width", "active_speed", "phys_state"});
  CheckBlocks(ports, required, "ibv_devinfo", section, out);
  if (IbvDevinfoPortAsked(section.command)) std::fill(said.begin(), said.end(), 1);
  CheckPortCounts(hcas, said, seen, "ibv_devinfo", section, out);
}

// Two dumps of one port (ibstat's state, perfquery's counters) become one
// sample: the later fills what the earlier left out.
void MergeInto(PortSample* into, const PortSample& from) {
  auto fill = [&](auto field) {
    if (!(into->*field)) into->*field = from.*field;
  };
  auto fill_each = [&](auto... fields) { (fill(fields), ...); };
  fill_each(&PortSample::link_layer, &PortSample::state, &PortSample::state_code,
            &PortSample::phys_state, &PortSample::phys_state_code, &PortSample::rate_gbps,
            &PortSample::rate_text, &PortSample::lid, &PortSample::node_guid,
            &PortSample::fw_version, &PortSample::board_id, &PortSample::xmit_bytes,
            &PortSample::rcv_bytes, &PortSample::netdev);
  into->counters.insert(from.counters.begin(), from.counters.end());
  into->hw_counters.insert(from.hw_counters.begin(), from.hw_counters.end());
  into->ethtool.insert(from.ethtool.begin(), from.ethtool.end());
  for (const std::string& c : from.saturated) {
    if (std::find(into->saturated.begin(), into->saturated.end(), c) == into->saturated.end())
      into->saturated.push_back(c);
  }
  std::sort(into->saturated.begin(), into->saturated.end());
}

}  // namespace

const char* PortDumpFormatName(PortDumpFormat format) {
  switch (format) {
    case PortDumpFormat::kIbstat:
      return "ibstat";
    case PortDumpFormat::kIbstatus:
      return "ibstatus";
    case PortDumpFormat::kPerfquery:
      return "perfquery";
    case PortDumpFormat::kIbvDevinfo:
      return "ibv_devinfo";
    case PortDumpFormat::kEthtool:
      return "ethtool -S";
    case PortDumpFormat::kSysfs:
      return "sysfs";
  }
  return "?";
}

std::optional<PortDumpFormat> SniffPortDump(std::string_view text) {
  std::deque<std::string> made;
  for (const HostSections& h : SplitPortDumpDocument(text, PortDumpContext{}, &made)) {
    if (!h.sections.empty()) return h.sections.front().format;
  }
  return std::nullopt;
}

namespace {

// "/sys/.../infiniband/mlx5_0/ports/1/counters/port_xmit_data:123" or
// "... 123": the path ends at the first ':' or blank after "/infiniband/"
// (PCI directories before it have colons; names after it have neither).
bool SplitSysfsLine(std::string_view line, std::string_view* path, std::string_view* value) {
  const size_t ib = line.find("/infiniband/");
  if (!line.starts_with("/sys/") || ib == std::string_view::npos) return false;
  size_t end = line.find_first_of(": \t", ib);
  *path = line.substr(0, end);
  *value = end == std::string_view::npos ? std::string_view() : TrimBlanks(line.substr(end + 1));
  return true;
}

struct SysfsPortText {
  PortSample sample;
  std::vector<std::string> widened;
  int line = 0;
  bool unreadable = false;  // a file read "N/A (no PMA)" or the like
};

// A counter file's text in a dump: a number, or what the kernel prints for
// one it cannot read ("N/A (no PMA)"): absent. Anything else is no counter.
bool Unreadable(std::string_view value) { return value.starts_with("N/A"); }

void ParseSysfs(const std::vector<DumpLine>& lines, int last_line, SectionPorts* out) {
  // (device, port) -> what its files said; device -> its device-level files.
  std::map<std::pair<std::string, int>, SysfsPortText> ports;
  std::map<std::string, std::map<std::string, std::string>> devices;
  for (const DumpLine& l : lines) {
    const int number = l.number;
    const std::string_view line = TrimBlanks(l.text);
    if (line.empty() || line.starts_with("#")) continue;  // comments of the one who saved it
    std::string_view path, value;
    if (!SplitSysfsLine(line, &path, &value)) {
      out->Error(number, "not a \"/sys/.../infiniband/DEV/... VALUE\" line: " + std::string(line));
      continue;
    }
    // grep . and cat print no file without a value: the dump ends mid-line.
    if (value.empty() && number >= last_line) {
      out->Error(number, "cut off: " + std::string(path) + " has no value");
      continue;
    }
    // After "/infiniband/": DEV / file, or DEV / ports / N / [dir /] file.
    const std::vector<std::string_view> parts =
        Split(path.substr(path.find("/infiniband/") + 12), '/');
    const std::string device(parts[0]);
    if (device.empty() || parts.size() < 2) {
      out->Error(number, "no device in " + std::string(path));
      continue;
    }
    if (parts.size() == 2) {
      if (parts[1] == "node_guid" || parts[1] == "fw_ver" || parts[1] == "board_id") {
        if (!value.empty()) devices[device][std::string(parts[1])] = std::string(value);
      }
      continue;  // other device files (node_type, hca_type, ...): not kept
    }
    if (parts[1] != "ports") continue;  // device-level hw_counters/, power/, ...
    int port = 0;
    if (parts.size() >= 4) {
      auto [end, ec] = std::from_chars(parts[2].data(), parts[2].data() + parts[2].size(), port);
      if (ec != std::errc() || end != parts[2].data() + parts[2].size()) port = 0;
    }
    if (port <= 0) {
      out->Error(number, "no port number in " + std::string(path));
      continue;
    }
    SysfsPortText& p = ports[{device, port}];
    if (p.line == 0) p.line = number;
    p.sample.device = device;
    p.sample.port = port;
    PortSample& s = p.sample;
    const std::string_view dir = parts.size() == 5 ? parts[3] : std::string_view();
    const std::string_view name = parts.back();
    if (parts.size() == 4) {
      if (name == "state") {
        ParseSysfsCoded(value, &s.state, &s.state_code);
      } else if (name == "phys_state") {
        ParseSysfsCoded(value, &s.phys_state, &s.phys_state_code);
      } else if (name == "rate" && !value.empty()) {
        s.rate_text = std::string(value);
        s.rate_gbps = ParseSysfsRateGbps(value);
      } else if (name == "link_layer" && !value.empty()) {
        s.link_layer = std::string(value);
      } else if (name == "lid" && !value.empty()) {
        s.lid = std::string(value);
      }
      continue;  // cap_mask, sm_lid, ...: not kept
    }
    if (parts.size() == 6 && parts[3] == "gid_attrs" && parts[4] == "ndevs" && parts[5] == "0") {
      if (!value.empty()) s.netdev = std::string(value);
      continue;
    }
    if (dir != "counters" && dir != "counters_ext" && dir != "hw_counters") continue;
    // "N/A (no PMA)", empty: absent, as the live reader has it.
    const std::optional<uint64_t> v = ParseSysfsCounter(value);
    if (!v) {
      if (Unreadable(value) || value.empty()) {
        p.unreadable = true;
      } else if (name != "lifespan") {
        out->Error(number, std::string(name) + ": not a counter value: " + std::string(value));
      }
      continue;
    }
    if (dir == "counters") {
      s.counters.insert_or_assign(std::string(name), *v);
    } else if (dir == "counters_ext") {
      auto x = std::find_if(std::begin(kSysfsExtNames), std::end(kSysfsExtNames),
                            [&](const SysfsExtName& e) { return e.file == name; });
      if (x == std::end(kSysfsExtNames)) {
        s.counters.insert_or_assign(std::string(name), *v);
      } else {
        s.counters.insert_or_assign(x->key, *v);
        p.widened.emplace_back(x->key);
      }
    } else if (name != "lifespan") {
      s.hw_counters.insert_or_assign(std::string(name), *v);
    }
    // gids/, pkeys/, gid_attrs/types/...: not kept
  }
  for (auto& [key, p] : ports) {
    // counters_ext/ wins over counters/ whatever the line order, as live.
    PortSample& s = p.sample;
    if (auto d = devices.find(key.first); d != devices.end()) {
      auto get = [&](const char* f) -> std::optional<std::string> {
        auto it = d->second.find(f);
        if (it == d->second.end()) return std::nullopt;
        return it->second;
      };
      s.node_guid = get("node_guid");
      s.fw_version = get("fw_ver");
      s.board_id = get("board_id");
    }
    if (s.link_layer != "Ethernet") s.netdev.reset();
    FinishSysfsPort(p.widened, &s);
    const bool nothing = !s.state && !s.phys_state && !s.rate_text && !s.link_layer &&
                         s.counters.empty() && s.hw_counters.empty();
    if (nothing && p.unreadable) {
      // An iWARP device without a PMA (node_exporter #966): nothing to keep.
      out->notes->push_back(s.device + " port " + std::to_string(s.port) +
                            ": every counter file reads N/A (no PMA) and nothing else was "
                            "saved: not stored");
      continue;
    }
    out->lines.push_back(p.line);
    out->ports.push_back(std::move(s));
  }
}

}  // namespace

void AddDumpPorts(const std::vector<PortSample>& ports, HostPorts* into) {
  for (const PortSample& p : ports) {
    auto same = std::find_if(into->ports.begin(), into->ports.end(), [&](const PortSample& q) {
      return q.device == p.device && q.port == p.port;
    });
    if (same == into->ports.end()) {
      into->ports.push_back(p);
    } else {
      MergeInto(&*same, p);
    }
  }
}

std::vector<NetdevPort> ParseIbdev2netdev(std::string_view text,
                                          std::vector<PortDumpError>* errors) {
  std::vector<NetdevPort> out;
  const std::vector<std::string_view> lines = Lines(text);
  for (size_t i = 0; i < lines.size(); ++i) {
    const std::string_view line = TrimBlanks(lines[i]);
    if (line.empty()) continue;
    const size_t arrow = line.find("==>");
    std::vector<std::string_view> left;
    if (arrow != std::string_view::npos) {
      for (std::string_view w : Split(line.substr(0, arrow), ' ')) {
        if (!TrimBlanks(w).empty()) left.push_back(TrimBlanks(w));
      }
    }
    std::string_view netdev =
        arrow == std::string_view::npos ? "" : TrimBlanks(line.substr(arrow + 3));
    netdev = netdev.substr(0, netdev.find_first_of(" \t"));
    NetdevPort m;
    for (size_t w = 0; w + 1 < left.size(); ++w) {
      if (left[w] == "port" && Unsigned(left[w + 1]))
        m.port = static_cast<int>(*Unsigned(left[w + 1]));
    }
    // The HCA: the first word, or -v's second after the PCI address.
    for (std::string_view w : left) {
      if (w.find(':') == std::string_view::npos) {
        m.device = std::string(w);
        break;
      }
    }
    m.netdev = std::string(netdev);
    if (m.device.empty() || m.port <= 0 || m.netdev.empty()) {
      errors->push_back(
          {static_cast<int>(i + 1),
           "not an ibdev2netdev line (\"mlx5_0 port 1 ==> eth0 (Up)\"): " + std::string(line)});
      continue;
    }
    out.push_back(std::move(m));
  }
  return out;
}

std::map<std::string, uint64_t> FlowControlStats(const std::map<std::string, uint64_t>& all) {
  // The whole device's drop counters of drivers that do not say "discard"
  // (Intel's "port.rx_dropped", "rx_missed"; the kernel's own "rx_dropped"):
  // by their whole name, as a part ("drop") would keep every queue's
  // ("rx3_xdp_drop" of mlx5, one per channel).
  static const std::set<std::string_view> kDrops = {
      "rx_dropped",       "tx_dropped", "port.rx_dropped", "port.tx_dropped",   "rx_missed",
      "rx_missed_errors", "rx_drops",   "tx_drops",        "rx_no_buffer_count"};
  std::map<std::string, uint64_t> out;
  for (const auto& [name, value] : all) {
    if (kDrops.count(name)) {
      out[name] = value;
      continue;
    }
    for (const char* kept : {"pause", "pfc", "_prio", "prio_", "ecn", "cnp", "discard",
                             "out_of_buffer", "crc_err", "link_down_events"}) {
      if (name.find(kept) != std::string::npos) {
        out[name] = value;
        break;
      }
    }
  }
  return out;
}

namespace {

// A value with a note written after it when posted: "0        <- must be
// zero", "9147732  ← ECN working", "5  # after the storm".
std::string_view WithoutNote(std::string_view value) {
  const size_t gap = value.find_first_of(" \t");
  if (gap == std::string_view::npos) return value;
  std::string_view note = TrimBlanks(value.substr(gap));
  for (std::string_view mark : {"<-", "\u2190", "#", "//"}) {
    if (note.starts_with(mark)) return value.substr(0, gap);
  }
  return value;
}

// "name: number" lines after `ethtool -S`'s "NIC statistics:" line.
std::map<std::string, uint64_t> EthtoolValues(const std::vector<DumpLine>& lines,
                                              std::vector<PortDumpError>* errors) {
  std::map<std::string, uint64_t> values;
  int last = 0;  // the output's last line: a malformed one there is a cut
  for (const DumpLine& l : lines) {
    if (!TrimBlanks(l.text).empty()) last = l.number;
  }
  for (const DumpLine& l : lines) {
    // A "# ..." note after the value may hold colons of its own.
    std::string_view line = ValueBeforeNote(TrimBlanks(l.text));
    if (line.empty() || IsNicStatisticsLine(line)) continue;
    // Where the one who posted it left lines out ("     ...", "     ..").
    if (line == "..." || line == ".." || line == "\u2026") continue;
    // The value follows the last colon: per-queue names have their own
    // ("[0]: rx_bytes: 209487403324" of bnx2x, "rxq0: rx_pkts: 5" of be2net).
    const size_t colon = line.rfind(':');
    std::string_view key, value;
    std::optional<uint64_t> v;
    if (colon != std::string_view::npos) {
      key = TrimBlanks(line.substr(0, colon));
      value = WithoutNote(TrimBlanks(line.substr(colon + 1)));
      v = Unsigned(value);
    }
    if (!v || key.empty()) {
      // "     tx" or "     rx-8.rx_bytes:" as the last line: a name cut
      // short or cut before its value ("garbage here" is no name).
      // Per-queue names count: "[2]: rx_mcast_packet" and "rxq0: rx_bytes:"
      // are a name cut short, each part between colons one word.
      // A bad value ("rx_bytes: 12x") is no cut: its part starts with a digit.
      bool name_like = true;
      for (std::string_view rest = line; name_like && !rest.empty();) {
        const size_t c = rest.find(':');
        const std::string_view part = TrimBlanks(rest.substr(0, c));
        name_like = !part.empty() && part.find_first_of(" \t") == std::string_view::npos &&
                    !(part.front() >= '0' && part.front() <= '9');
        rest = c == std::string_view::npos ? std::string_view() : TrimBlanks(rest.substr(c + 1));
      }
      if (l.number == last && name_like) {
        errors->push_back(
            {l.number, "cut off: the last line, " + std::string(line) + ", is no whole statistic"});
        continue;
      }
      errors->push_back({l.number, "not a statistic: " + std::string(line)});
      continue;
    }
    values[std::string(key)] = *v;
  }
  return values;
}

// The interface of a kept "ethtool -S IFACE" command line.
std::optional<std::string> EthtoolNetdev(const std::optional<std::string>& command) {
  if (!command || !command->starts_with("ethtool")) return std::nullopt;
  std::string_view rest = *command;
  for (std::string_view flag : {" -S ", " --statistics "}) {
    if (size_t at = rest.find(flag); at != std::string_view::npos) {
      std::string_view w = TrimBlanks(rest.substr(at + flag.size()));
      w = w.substr(0, w.find_first_of(" \t|>"));
      // "# ethtool -S output" is a markdown heading, not a root prompt.
      static const std::set<std::string_view> prose = {
          "output", "of", "for", "on", "results", "stats", "statistics", "counters"};
      if (!w.empty() && !prose.contains(w) && !w.starts_with("-")) return std::string(w);
    }
  }
  return std::nullopt;
}

void ParseEthtool(const DumpSection& section, const PortDumpContext& c, SectionPorts* out) {
  std::map<std::string, uint64_t> all = EthtoolValues(section.lines, out->errors);
  const int line = section.lines.front().number;
  std::optional<std::string> netdev = EthtoolNetdev(section.command);
  if (!netdev) netdev = c.netdev;
  PortSample s;
  s.netdev = netdev;
  if (c.device) {
    s.device = *c.device;
    s.port = c.port.value_or(1);
  } else if (netdev) {
    auto m = std::find_if(c.netdev_map.begin(), c.netdev_map.end(),
                          [&](const NetdevPort& n) { return n.netdev == *netdev; });
    if (m != c.netdev_map.end()) {
      s.device = m->device;
      s.port = m->port;
    } else {
      s.device = *netdev;
      s.port = 1;
      std::string note =
          *netdev + " is tied to no HCA port" +
          (c.netdev_map.empty() ? std::string() : std::string(" in the netdev map")) +
          ": stored as device " + *netdev + " port 1 (give --device and --port, or --netdev-map)";
      // Said once however many `ethtool -S IFACE | grep ...` blocks name it.
      if (std::find(out->notes->begin(), out->notes->end(), note) == out->notes->end())
        out->notes->push_back(std::move(note));
    }
  } else {
    out->notes->push_back(
        "ethtool -S output names no interface: give --device (and --port), or --netdev "
        "with --netdev-map, or name the file HOST.NETDEV.ethtool");
    return;
  }
  if (all.empty()) {
    if (out->errors->empty())
      out->Error(line, "ethtool -S output with no statistic after \"NIC statistics:\"");
    return;
  }
  s.ethtool = FlowControlStats(all);
  if (s.ethtool.empty()) {
    out->notes->push_back("line " + std::to_string(line) + ": none of the " +
                          std::to_string(all.size()) + " statistics of " + s.device +
                          " is one fabtrack keeps (pause, PFC, ECN/CNP, drops, link errors)");
    return;
  }
  out->lines.push_back(line);
  out->ports.push_back(std::move(s));
}

bool NothingRead(const PortSample& p) {
  return !p.state && !p.phys_state && !p.rate_text && !p.rate_gbps && !p.link_layer &&
         p.counters.empty() && p.hw_counters.empty() && p.ethtool.empty();
}

// perfquery without -C names its port "lidN" only: where another tool of
// the same document (ibstat's "Base lid", ibstatus' "base lid: 0x1a1")
// gives exactly one port that LID and port number, the counters are that
// port's.
void JoinPortsByLid(HostPorts* host) {
  std::vector<PortSample>& ports = host->ports;
  for (size_t i = 0; i < ports.size();) {
    const PortSample& p = ports[i];
    const std::optional<uint64_t> lid = p.lid ? Unsigned(*p.lid) : std::nullopt;
    if (!lid || p.device != "lid" + *p.lid) {
      ++i;
      continue;
    }
    std::vector<size_t> same;
    for (size_t j = 0; j < ports.size(); ++j) {
      if (j != i && ports[j].port == p.port && ports[j].lid && Unsigned(*ports[j].lid) == lid &&
          !ports[j].device.starts_with("lid"))
        same.push_back(j);
    }
    if (same.size() != 1) {
      ++i;
      continue;
    }
    MergeInto(&ports[same[0]], p);
    ports.erase(ports.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// `perfquery -C mlx5_0 1` asks LID 1 through mlx5_0: the counters are LID
// 1's port, another node's (a switch) when the document's other tools give
// every port of mlx5_0 another LID ("Lid 1 port 0" beside ibstat's "Base
// lid: 176"). Stored as mlx5_0's they would be a port this host does not
// have; left out with a note.
void LeaveOutOtherNodesPorts(HostPorts* host, std::vector<std::string>* notes) {
  std::vector<PortSample>& ports = host->ports;
  auto counters_only = [](const PortSample& p) {
    return !p.state && !p.phys_state && !p.rate_text && !p.rate_gbps && !p.link_layer;
  };
  for (size_t i = 0; i < ports.size();) {
    const PortSample& p = ports[i];
    const std::optional<uint64_t> lid = p.lid ? Unsigned(*p.lid) : std::nullopt;
    if (!lid || !counters_only(p) || p.device.starts_with("lid")) {
      ++i;
      continue;
    }
    std::vector<std::string> lids;
    bool same = false;
    for (const PortSample& q : ports) {
      if (&q == &p || q.device != p.device || counters_only(q) || !q.lid) continue;
      const std::optional<uint64_t> other = Unsigned(*q.lid);
      if (!other) continue;
      lids.push_back(*q.lid);
      same |= other == lid;
    }
    if (lids.empty() || same) {
      ++i;
      continue;
    }
    std::string list;
    for (const std::string& l : lids) list += (list.empty() ? "" : ", ") + l;
    notes->push_back("perfquery's counters of LID " + *p.lid + " port " + std::to_string(p.port) +
                     ", asked through " + p.device + ", are another node's: " + p.device +
                     "'s ports have LID " + list + "; left out");
    ports.erase(ports.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// One tool's output lists each HCA port once: the same port twice in one
// section is two outputs run together (two hosts' ibstat pasted one after
// the other, no line naming either). A repeat read alike is dropped; one
// read otherwise cannot be told this host's or another's: an error on its
// line, so nothing of the document is stored as one host's.
void DropRepeatedPorts(const DumpSection& section, SectionPorts* found) {
  if (section.format != PortDumpFormat::kIbstat && section.format != PortDumpFormat::kIbstatus &&
      section.format != PortDumpFormat::kIbvDevinfo)
    return;
  std::vector<PortSample>& ports = found->ports;
  for (size_t i = 0; i < ports.size();) {
    auto same = [&](const PortSample& p) {
      return p.device == ports[i].device && p.port == ports[i].port;
    };
    auto first = std::find_if(ports.begin(), ports.begin() + static_cast<std::ptrdiff_t>(i), same);
    if (first == ports.begin() + static_cast<std::ptrdiff_t>(i)) {
      ++i;
      continue;
    }
    const size_t j = static_cast<size_t>(first - ports.begin());
    if (!(ports[j] == ports[i])) {
      found->Error(found->lines[i],
                   ports[i].device + " port " + std::to_string(ports[i].port) +
                       " again (first at line " + std::to_string(found->lines[j]) +
                       "), read otherwise: two " + PortDumpFormatName(section.format) +
                       " outputs run together? Put a line naming each host before its "
                       "output (\"gpu-a:\") or give each its own file");
    }
    ports.erase(ports.begin() + static_cast<std::ptrdiff_t>(i));
    found->lines.erase(found->lines.begin() + static_cast<std::ptrdiff_t>(i));
  }
}

// One host's part of a document: its tools' sections read, their ports
// joined (ibstat's state and perfquery's counters of one port: one sample).
ParsedPortDump ParseHost(const HostSections& h, const PortDumpContext& context) {
  ParsedPortDump out;
  out.host = h.host;
  out.errors = h.errors;
  HostPorts joined;
  std::vector<DumpLine> sysfs;
  auto keep = [&](const SectionPorts& found) {
    for (size_t i = 0; i < found.ports.size(); ++i) {
      const PortSample& p = found.ports[i];
      if (NothingRead(p)) {
        out.errors.push_back({found.lines[i], p.device + " port " + std::to_string(p.port) +
                                                  ": no state, rate, link layer or counter "
                                                  "read: not stored"});
        continue;
      }
      AddDumpPorts({p}, &joined);
    }
  };
  auto erred_at = [&](int line) {
    return std::any_of(out.errors.begin(), out.errors.end(),
                       [&](const PortDumpError& e) { return e.line == line; });
  };
  for (const DumpSection& section : h.sections) {
    if (std::find(out.formats.begin(), out.formats.end(), section.format) == out.formats.end())
      out.formats.push_back(section.format);
    SectionPorts found{.errors = &out.errors, .notes = &out.notes};
    switch (section.format) {
      case PortDumpFormat::kIbstat:
        ParseIbstat(section, &found);
        break;
      case PortDumpFormat::kIbstatus:
        ParseIbstatus(section, &found);
        break;
      case PortDumpFormat::kPerfquery:
        ParsePerfquery(section, context.device, &found);
        break;
      case PortDumpFormat::kIbvDevinfo:
        ParseIbvDevinfo(section, &found);
        break;
      case PortDumpFormat::kEthtool:
        ParseEthtool(section, context, &found);
        break;
      case PortDumpFormat::kSysfs:
        // All sysfs lines at once: a port's files may be anywhere.
        sysfs.insert(sysfs.end(), section.lines.begin(), section.lines.end());
        break;
    }
    DropRepeatedPorts(section, &found);
    // ibstat giving up on an HCA ("ibpanic: [1323906] main: stat of IB
    // device 'mlx5_8' failed: No such file or directory") lists none from
    // that one on: the dump is not whole, wherever the line is.
    if (section.format == PortDumpFormat::kIbstat && section.broken_text.starts_with("ibpanic:") &&
        !erred_at(section.broken_by)) {
      out.errors.push_back({section.broken_by,
                            "ibstat stopped on an error of its own (" +
                                std::string(section.broken_text) +
                                "): the HCAs from the one it names on are missing from the dump"});
    }
    // The document's last line right after a tool's output and no line of
    // it: the output cut short ("        bas").
    if (section.broken_by != 0 && section.broken_by == h.last_line &&
        !erred_at(section.broken_by)) {
      out.errors.push_back({section.broken_by, std::string("cut off: the last line is no line of "
                                                           "the ") +
                                                   PortDumpFormatName(section.format) +
                                                   " output it ends"});
    }
    // The document's last line a key with nothing after it ("\t\tLink
    // layer:"): cut at the colon.
    if (section.format != PortDumpFormat::kSysfs && !section.lines.empty()) {
      auto last = std::find_if(section.lines.rbegin(), section.lines.rend(),
                               [](const DumpLine& l) { return !TrimBlanks(l.text).empty(); });
      std::string_view key, value;
      if (last != section.lines.rend() && last->number == h.last_line &&
          KeyValue(TrimBlanks(last->text), &key, &value) && value.empty() &&
          !erred_at(h.last_line)) {
        out.errors.push_back(
            {h.last_line, "cut off: the last line, " + std::string(key) + ", has no value"});
      }
    }
    keep(found);
  }
  if (!sysfs.empty()) {
    SectionPorts found{.errors = &out.errors, .notes = &out.notes};
    ParseSysfs(sysfs, h.last_line, &found);
    keep(found);
  }
  JoinPortsByLid(&joined);
  LeaveOutOtherNodesPorts(&joined, &out.notes);
  // perfquery's counters no HCA was named for and no other tool's port
  // took: stored under their LID, and said, as an ethtool netdev without
  // its HCA is.
  for (const PortSample& p : joined.ports) {
    if (p.lid && p.device == "lid" + *p.lid)
      out.notes.push_back("perfquery names no HCA: LID " + *p.lid + " port " +
                          std::to_string(p.port) + " stored as device " + p.device +
                          " (give --device, or keep the `perfquery ... -C HCA` command line)");
  }
  if (!out.formats.empty()) out.format = out.formats.front();
  out.ports = std::move(joined.ports);
  return out;
}

std::string FormatNames(const ParsedPortDump& d) {
  std::string names;
  for (PortDumpFormat f : d.formats)
    names += (names.empty() ? "" : ", ") + std::string(PortDumpFormatName(f));
  return names;
}

}  // namespace

std::optional<std::vector<ParsedPortDump>> ParsePortDumpDocument(std::string_view text,
                                                                 const PortDumpContext& context,
                                                                 std::string* why) {
  text = WithoutByteOrderMark(text);
  // A dump quoted whole in a reply ("> CA 'mlx5_0'"): read as posted.
  if (std::optional<std::string> plain = UnquoteReply(text))
    return ParsePortDumpDocument(*plain, context, why);
  std::deque<std::string> made;
  std::vector<HostSections> hosts = SplitPortDumpDocument(text, context, &made);
  std::vector<ParsedPortDump> dumps;
  bool several = hosts.size() > 1;
  for (const HostSections& h : hosts) {
    if (h.sections.empty() && h.errors.empty()) {
      // A named host whose part holds no dump is worth saying; an unnamed
      // preamble before the first host is not.
      if (several && h.host) {
        ParsedPortDump empty;
        empty.host = h.host;
        empty.errors.push_back(
            {h.first_line, *h.host + ": no ibstat, ibstatus, perfquery, ibv_devinfo, ethtool -S "
                                     "or sysfs output in its part"});
        dumps.push_back(std::move(empty));
      }
      continue;
    }
    ParsedPortDump d = ParseHost(h, context);
    if (d.ports.empty() && d.errors.empty()) {
      std::string reason = FormatNames(d) + " output with no port to store";
      // The last note says why nothing is left ("none of the 13 statistics
      // ... is one fabtrack keeps"), earlier ones how a port was named.
      if (!d.notes.empty()) reason += ": " + d.notes.back();
      if (!several) {
        *why = reason;
        return std::nullopt;
      }
      d.errors.push_back({h.first_line, d.host.value_or("?") + ": " + reason});
    }
    dumps.push_back(std::move(d));
  }
  if (dumps.empty()) {
    *why =
        "not a port dump fabtrack knows: expected the output of ibstat, ibstatus, perfquery, "
        "ibv_devinfo, ethtool -S or sysfs files (grep -H . /sys/class/infiniband/...)";
    return std::nullopt;
  }
  return dumps;
}

std::optional<ParsedPortDump> ParsePortDump(std::string_view text, const PortDumpContext& context,
                                            std::string* why) {
  std::optional<std::vector<ParsedPortDump>> dumps = ParsePortDumpDocument(text, context, why);
  if (!dumps) return std::nullopt;
  if (dumps->size() > 1) {
    std::string hosts;
    for (const ParsedPortDump& d : *dumps)
      hosts += (hosts.empty() ? "" : ", ") + d.host.value_or("(unnamed)");
    *why = "the dumps of " + std::to_string(dumps->size()) + " hosts (" + hosts +
           "): one host's dump expected";
    return std::nullopt;
  }
  return std::move(dumps->front());
}

std::optional<std::map<std::string, uint64_t>> ParseEthtoolStatistics(
    std::string_view text, std::vector<PortDumpError>* errors, std::string* why) {
  std::vector<DumpLine> lines;
  int number = 0;
  bool found = false;
  for (std::string_view line : Lines(text)) {
    ++number;
    if (!found) {
      found = IsNicStatisticsLine(TrimBlanks(line));  // lines before it: the command, banners
      continue;
    }
    lines.push_back({number, line});
  }
  if (!found) {
    *why = "not `ethtool -S` output (no \"NIC statistics:\" line)";
    return std::nullopt;
  }
  return EthtoolValues(lines, errors);
}

}  // namespace fabtrack
