#include "collector/parse/port_dump_parser.h"

#include <charconv>
#include <map>

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

void DeriveBytes(PortSample* p) {
  if (auto it = p->counters.find("port_xmit_data"); it != p->counters.end()) {
    p->xmit_bytes = it->second * 4;
  }
  if (auto it = p->counters.find("port_rcv_data"); it != p->counters.end()) {
    p->rcv_bytes = it->second * 4;
  }
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
  for (PortSample& p : out->ports) DeriveBytes(&p);
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
  }
  return std::nullopt;
}

std::optional<ParsedPortDump> ParsePortDump(std::string_view text,
                                            const std::optional<std::string>& device,
                                            std::string* why) {
  std::optional<PortDumpFormat> format = SniffPortDump(text);
  if (!format) {
    *why =
        "not a port dump fabtrack knows: expected the output of ibstat, ibstatus, perfquery or "
        "ibv_devinfo";
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
      ParsePerfquery(lines, device, &out);
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
