#include "collector/parse/port_dump_parser.h"

#include <algorithm>
#include <charconv>
#include <map>

#include "collector/parse/sysfs_values.h"

namespace fabtrack {
namespace {

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

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

// "key: value" (ibstat, ibstatus, ibv_devinfo) or perfquery's
// "Key:.......value": the key and the value, trimmed; false without a colon.
bool KeyValue(std::string_view line, std::string_view* key, std::string_view* value) {
  const size_t colon = line.find(':');
  if (colon == std::string_view::npos) return false;
  *key = Trim(line.substr(0, colon));
  std::string_view v = line.substr(colon + 1);
  while (!v.empty() && v.front() == '.') v.remove_prefix(1);
  *value = Trim(v);
  return true;
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
  std::string word(Trim(text));
  if (size_t colon = word.find(':'); colon != std::string::npos) word = word.substr(colon + 1);
  if (size_t paren = word.find('('); paren != std::string::npos) word = word.substr(0, paren);
  std::string key = Lower(Trim(word));
  if (key.starts_with("port_")) key = key.substr(5);
  const auto& table = physical ? PhysStates() : States();
  auto it = table.find(key);
  if (it == table.end()) {
    (physical ? p->phys_state : p->state) = std::string(Trim(word));
    return;
  }
  (physical ? p->phys_state_code : p->state_code) = it->second.first;
  (physical ? p->phys_state : p->state) = it->second.second;
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

// A new sample for port `number` of `device`, with what the device's lines
// said before it (empty: not said); nullptr when there is no number.
PortSample* AddPort(std::optional<uint64_t> number, const std::string& device,
                    const std::string& fw, const std::string& guid, const std::string& board,
                    ParsedPortDump* out) {
  if (!number) return nullptr;
  PortSample& p = out->ports.emplace_back();
  p.device = device;
  p.port = static_cast<int>(*number);
  if (!fw.empty()) p.fw_version = fw;
  if (!guid.empty()) p.node_guid = guid;
  if (!board.empty()) p.board_id = board;
  return &p;
}

void ParseIbstat(const std::vector<std::string_view>& lines, ParsedPortDump* out) {
  std::string device, fw, guid;
  PortSample* port = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    std::string_view key, value;
    if (line.starts_with("CA '")) {
      device = Quoted(line);
      fw.clear();
      guid.clear();
      port = nullptr;
    } else if (line.starts_with("Port ") && line.ends_with(":") && !device.empty()) {
      port = AddPort(Unsigned(Trim(line.substr(5, line.size() - 6))), device, fw, guid, "", out);
      if (!port)
        out->errors.push_back({static_cast<int>(i + 1), "bad port number: " + std::string(line)});
    } else if (KeyValue(line, &key, &value)) {
      if (key == "Firmware version") fw = value;
      if (key == "Node GUID") guid = value;
      if (!port) continue;
      if (key == "State") SetState(value, false, port);
      if (key == "Physical state") SetState(value, true, port);
      if (key == "Rate") {
        port->rate_gbps = Number(value);
        port->rate_text = std::string(value);
      }
      if (key == "Base lid") port->lid = std::string(value);
      if (key == "Link layer") port->link_layer = std::string(value);
    }
  }
}

void ParseIbstatus(const std::vector<std::string_view>& lines, ParsedPortDump* out) {
  PortSample* port = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    std::string_view key, value;
    if (line.starts_with("Infiniband device '")) {
      PortSample& p = out->ports.emplace_back();
      p.device = Quoted(line);
      size_t at = line.find(" port ");
      auto number = at == std::string_view::npos ? std::nullopt : Unsigned(line.substr(at + 6));
      if (!number) out->errors.push_back({static_cast<int>(i + 1), "no port number"});
      p.port = static_cast<int>(number.value_or(0));
      port = &p;
    } else if (port && KeyValue(line, &key, &value)) {
      if (key == "state") SetState(value, false, port);
      if (key == "phys state") SetState(value, true, port);
      if (key == "rate") {
        port->rate_gbps = Number(value);
        port->rate_text = std::string(value);
      }
      if (key == "base lid") port->lid = std::string(value);
      if (key == "link_layer") port->link_layer = std::string(value);
    }
  }
}

void ParsePerfquery(const std::vector<std::string_view>& lines,
                    const std::optional<std::string>& device, ParsedPortDump* out) {
  std::string named = device.value_or("");
  PortSample* port = nullptr;
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    std::string_view key, value;
    if (line.find("perfquery") != std::string_view::npos) {
      // The command line, when the dump kept it: "-C mlx5_0" names the HCA.
      if (size_t c = line.find(" -C "); c != std::string_view::npos && !device) {
        std::string_view rest = Trim(line.substr(c + 4));
        named = std::string(rest.substr(0, rest.find(' ')));
      }
      continue;
    }
    if (line.starts_with("# Port") && line.find("counters:") != std::string_view::npos) {
      size_t at = line.find(" port ");
      auto number = at == std::string_view::npos ? std::nullopt : Unsigned(line.substr(at + 6));
      PortSample& p = out->ports.emplace_back();
      p.port = static_cast<int>(number.value_or(0));
      if (size_t lid = line.find("Lid "); lid != std::string_view::npos) {
        std::string_view l = line.substr(lid + 4);
        p.lid = std::string(l.substr(0, l.find(' ')));
      }
      p.device = named.empty() ? "lid" + p.lid.value_or("?") : named;
      port = &p;
      continue;
    }
    if (!port || !KeyValue(line, &key, &value)) continue;
    auto name = PerfqueryNames().find(key);
    if (name == PerfqueryNames().end()) continue;  // PortSelect, CounterSelect, ...
    auto v = Unsigned(value);
    if (!v) {
      out->errors.push_back({static_cast<int>(i + 1),
                             std::string(key) + ": not a counter value: " + std::string(value)});
      continue;
    }
    port->counters[name->second] = *v;
  }
  // As the live reader finishes a port (the same code): legacy counters at
  // their width's maximum are saturated (PortXmitWait and the error counters
  // of PortCounters, which `perfquery -x` prints beside the 64-bit extended
  // data counters; plain perfquery's 32-bit data counters too), data words
  // as bytes.
  for (PortSample& p : out->ports) FinishSysfsPort({}, &p);
}

void ParseIbvDevinfo(const std::vector<std::string_view>& lines, ParsedPortDump* out) {
  std::string device, fw, guid, board;
  PortSample* port = nullptr;
  int width = 0;
  std::optional<double> lane_gbps;
  auto finish_rate = [&] {
    if (port && width > 0 && lane_gbps) port->rate_gbps = width * *lane_gbps;
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    std::string_view key, value;
    if (!KeyValue(line, &key, &value)) continue;
    if (key == "hca_id") {
      finish_rate();
      device = std::string(value);
      fw.clear();
      guid.clear();
      board.clear();
      port = nullptr;
    } else if (key == "fw_ver") {
      fw = value;
    } else if (key == "node_guid") {
      guid = value;
    } else if (key == "board_id") {
      board = value;
    } else if (key == "port" && !device.empty()) {
      finish_rate();
      port = AddPort(Unsigned(value), device, fw, guid, board, out);
      if (!port) out->errors.push_back({static_cast<int>(i + 1), "bad port number"});
      width = 0;
      lane_gbps.reset();
    } else if (port) {
      if (key == "state") SetState(value, false, port);
      if (key == "phys_state") SetState(value, true, port);
      if (key == "port_lid") port->lid = std::string(value);
      if (key == "link_layer") port->link_layer = std::string(value);
      if (key == "active_width") width = static_cast<int>(Unsigned(value).value_or(0));  // "4X (2)"
      if (key == "active_speed") lane_gbps = Number(value);  // "25.0 Gbps (32)"
    }
  }
  finish_rate();
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
  for (std::string_view line : Lines(text)) {
    line = Trim(line);
    if (line.starts_with("CA '")) return PortDumpFormat::kIbstat;
    if (line.starts_with("Infiniband device '")) return PortDumpFormat::kIbstatus;
    if (line.starts_with("# Port") && line.find("counters:") != std::string_view::npos) {
      return PortDumpFormat::kPerfquery;
    }
    if (line.starts_with("hca_id:")) return PortDumpFormat::kIbvDevinfo;
    if (line == "NIC statistics:") return PortDumpFormat::kEthtool;
    if (line.starts_with("/sys/") && line.find("/infiniband/") != std::string_view::npos) {
      return PortDumpFormat::kSysfs;
    }
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
  *value = end == std::string_view::npos ? std::string_view() : Trim(line.substr(end + 1));
  return true;
}

std::vector<std::string_view> Split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  while (true) {
    size_t at = s.find(sep);
    parts.push_back(s.substr(0, at));
    if (at == std::string_view::npos) return parts;
    s.remove_prefix(at + 1);
  }
}

struct SysfsPortText {
  PortSample sample;
  std::vector<std::string> widened;
};

void ParseSysfs(const std::vector<std::string_view>& lines, ParsedPortDump* out) {
  // (device, port) -> what its files said; device -> its device-level files.
  std::map<std::pair<std::string, int>, SysfsPortText> ports;
  std::map<std::string, std::map<std::string, std::string>> devices;
  for (size_t i = 0; i < lines.size(); ++i) {
    const int number = static_cast<int>(i + 1);
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    std::string_view path, value;
    if (!SplitSysfsLine(line, &path, &value)) {
      out->errors.push_back(
          {number, "not a \"/sys/.../infiniband/DEV/... VALUE\" line: " + std::string(line)});
      continue;
    }
    // After "/infiniband/": DEV / file, or DEV / ports / N / [dir /] file.
    const std::vector<std::string_view> parts =
        Split(path.substr(path.find("/infiniband/") + 12), '/');
    const std::string device(parts[0]);
    if (device.empty() || parts.size() < 2) {
      out->errors.push_back({number, "no device in " + std::string(path)});
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
      out->errors.push_back({number, "no port number in " + std::string(path)});
      continue;
    }
    SysfsPortText& p = ports[{device, port}];
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
    // "N/A (no PMA)", empty, unreadable: absent, as the live reader has it.
    const std::optional<uint64_t> v = ParseSysfsCounter(value);
    if (dir == "counters") {
      if (v) s.counters.insert_or_assign(std::string(name), *v);
    } else if (dir == "counters_ext") {
      if (!v) continue;
      auto x = std::find_if(std::begin(kSysfsExtNames), std::end(kSysfsExtNames),
                            [&](const SysfsExtName& e) { return e.file == name; });
      if (x == std::end(kSysfsExtNames)) {
        s.counters.insert_or_assign(std::string(name), *v);
      } else {
        s.counters.insert_or_assign(x->key, *v);
        p.widened.emplace_back(x->key);
      }
    } else if (dir == "hw_counters") {
      if (v && name != "lifespan") s.hw_counters.insert_or_assign(std::string(name), *v);
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
    const std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    const size_t arrow = line.find("==>");
    std::vector<std::string_view> left;
    if (arrow != std::string_view::npos) {
      for (std::string_view w : Split(line.substr(0, arrow), ' ')) {
        if (!Trim(w).empty()) left.push_back(Trim(w));
      }
    }
    std::string_view netdev = arrow == std::string_view::npos ? "" : Trim(line.substr(arrow + 3));
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
  std::map<std::string, uint64_t> out;
  for (const auto& [name, value] : all) {
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

void ParseEthtool(std::string_view text, const PortDumpContext& c, ParsedPortDump* out) {
  std::string why;
  std::optional<std::map<std::string, uint64_t>> all =
      ParseEthtoolStatistics(text, &out->errors, &why);
  if (!all) return;
  PortSample s;
  s.netdev = c.netdev;
  if (c.device) {
    s.device = *c.device;
    s.port = c.port.value_or(1);
  } else if (c.netdev) {
    auto m = std::find_if(c.netdev_map.begin(), c.netdev_map.end(),
                          [&](const NetdevPort& n) { return n.netdev == *c.netdev; });
    if (m != c.netdev_map.end()) {
      s.device = m->device;
      s.port = m->port;
    } else {
      s.device = *c.netdev;
      s.port = 1;
      out->notes.push_back(
          *c.netdev + " is tied to no HCA port" +
          (c.netdev_map.empty() ? std::string() : std::string(" in the netdev map")) +
          ": stored as device " + *c.netdev +
          " port 1 (give --device and --port, or --netdev-map)");
    }
  } else {
    return;  // no port to store it under: ParsePortDump says why
  }
  s.ethtool = FlowControlStats(*all);
  out->ports.push_back(std::move(s));
}

}  // namespace

std::optional<ParsedPortDump> ParsePortDump(std::string_view text, const PortDumpContext& context,
                                            std::string* why) {
  std::optional<PortDumpFormat> format = SniffPortDump(text);
  if (!format) {
    *why =
        "not a port dump fabtrack knows: expected the output of ibstat, ibstatus, perfquery, "
        "ibv_devinfo, ethtool -S or sysfs files (grep -H . /sys/class/infiniband/...)";
    return std::nullopt;
  }
  ParsedPortDump out;
  out.format = *format;
  const std::vector<std::string_view> lines = Lines(text);
  switch (*format) {
    case PortDumpFormat::kIbstat:
      ParseIbstat(lines, &out);
      break;
    case PortDumpFormat::kIbstatus:
      ParseIbstatus(lines, &out);
      break;
    case PortDumpFormat::kPerfquery:
      ParsePerfquery(lines, context.device, &out);
      break;
    case PortDumpFormat::kEthtool:
      if (!context.device && !context.netdev) {
        *why =
            "ethtool -S output names no interface: give --device (and --port), or --netdev "
            "with --netdev-map, or name the file HOST.NETDEV.ethtool";
        return std::nullopt;
      }
      ParseEthtool(text, context, &out);
      break;
    case PortDumpFormat::kSysfs:
      ParseSysfs(lines, &out);
      break;
    case PortDumpFormat::kIbvDevinfo:
      ParseIbvDevinfo(lines, &out);
      break;
  }
  if (out.ports.empty()) {
    *why = std::string(PortDumpFormatName(*format)) + " output without any port";
    return std::nullopt;
  }
  return out;
}

std::optional<std::map<std::string, uint64_t>> ParseEthtoolStatistics(
    std::string_view text, std::vector<PortDumpError>* errors, std::string* why) {
  const std::vector<std::string_view> lines = Lines(text);
  size_t first = 0;
  while (first < lines.size() && Trim(lines[first]).empty()) ++first;
  if (first == lines.size() || Trim(lines[first]) != "NIC statistics:") {
    *why = "not `ethtool -S` output (its first line is \"NIC statistics:\")";
    return std::nullopt;
  }
  std::map<std::string, uint64_t> values;
  for (size_t i = first + 1; i < lines.size(); ++i) {
    std::string_view line = Trim(lines[i]);
    if (line.empty()) continue;
    std::string_view key, value;
    std::optional<uint64_t> v;
    if (KeyValue(line, &key, &value)) v = Unsigned(value);
    if (!v || key.empty()) {
      errors->push_back({static_cast<int>(i + 1), "not a statistic: " + std::string(line)});
      continue;
    }
    values[std::string(key)] = *v;
  }
  return values;
}

}  // namespace fabtrack
