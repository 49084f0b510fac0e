#include "core/port_sample_json.h"

#include <limits>
#include <stdexcept>
#include <type_traits>

#include "core/json_optional.h"

namespace fabtrack {

nlohmann::json HostPortsToJson(const HostPorts& host) {
  using nlohmann::json;
  json ports = json::array();
  for (const PortSample& p : host.ports) {
    json port = {{"device", p.device},
                 {"port", p.port},
                 {"link_layer", OptionalJson(p.link_layer)},
                 {"state", OptionalJson(p.state)},
                 {"phys_state", OptionalJson(p.phys_state)},
                 {"rate_gbps", OptionalJson(p.rate_gbps)},
                 {"counters", p.counters},
                 {"xmit_bytes", OptionalJson(p.xmit_bytes)},
                 {"rcv_bytes", OptionalJson(p.rcv_bytes)},
                 {"saturated", p.saturated},
                 {"hw_counters", p.hw_counters}};
    if (p.netdev) port["netdev"] = *p.netdev;
    if (!p.ethtool.empty()) port["ethtool"] = p.ethtool;
    if (p.fw_version) port["fw_version"] = *p.fw_version;
    if (p.board_id) port["board_id"] = *p.board_id;
    if (p.node_guid) port["node_guid"] = *p.node_guid;
    if (p.lid) port["lid"] = *p.lid;
    if (p.rate_text) port["rate"] = *p.rate_text;
    if (p.state_code) port["state_code"] = *p.state_code;
    if (p.phys_state_code) port["phys_state_code"] = *p.phys_state_code;
    ports.push_back(std::move(port));
  }
  json problems = json::array();
  for (const PortProblem& problem : host.problems) {
    problems.push_back({{"path", problem.path}, {"message", problem.message}});
  }
  json doc = {{"host", host.host}, {"ports", ports}, {"problems", problems}};
  if (host.kernel_release) doc["kernel_release"] = *host.kernel_release;
  return doc;
}

namespace {

template <typename T>
std::optional<T> Field(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    // Converting a float or an out-of-range number to an integer is
    // undefined behaviour (UBSan found it by fuzzing): refuse it.
    if (!it->is_number_integer())
      throw std::invalid_argument(std::string(key) + ": not an integer");
    if (std::is_unsigned_v<T> && !it->is_number_unsigned() && it->get<int64_t>() < 0) {
      throw std::invalid_argument(std::string(key) + ": negative");
    }
    if (!std::is_unsigned_v<T> && it->is_number_unsigned() &&
        it->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max())) {
      throw std::invalid_argument(std::string(key) + ": out of range");
    }
    if (!std::is_unsigned_v<T> && !it->is_number_unsigned() &&
        (it->get<int64_t>() < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
         it->get<int64_t>() > static_cast<int64_t>(std::numeric_limits<T>::max()))) {
      throw std::invalid_argument(std::string(key) + ": out of range");
    }
  }
  return it->get<T>();
}

// A map of counter name to a non-negative integer.
std::map<std::string, uint64_t> Counters(const nlohmann::json& j, const char* key) {
  std::map<std::string, uint64_t> out;
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_object()) throw std::invalid_argument(std::string(key) + ": not an object");
  for (const auto& [name, value] : it->items()) {
    if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<int64_t>() >= 0)) {
      throw std::invalid_argument(std::string(key) + "." + name + ": not a counter value");
    }
    out[name] = value.get<uint64_t>();
  }
  return out;
}

}  // namespace

std::optional<HostPorts> HostPortsFromJson(const nlohmann::json& doc, std::string* why) {
  try {
    HostPorts host;
    host.host = doc.at("host").get<std::string>();
    host.kernel_release = Field<std::string>(doc, "kernel_release");
    for (const nlohmann::json& port : doc.at("ports")) {
      PortSample p;
      p.device = port.at("device").get<std::string>();
      p.port = Field<int>(port, "port").value_or(-1);
      if (p.port < 0) throw std::invalid_argument("port: missing or negative");
      p.link_layer = Field<std::string>(port, "link_layer");
      p.state = Field<std::string>(port, "state");
      p.state_code = Field<int>(port, "state_code");
      p.phys_state = Field<std::string>(port, "phys_state");
      p.phys_state_code = Field<int>(port, "phys_state_code");
      p.rate_gbps = Field<double>(port, "rate_gbps");
      p.rate_text = Field<std::string>(port, "rate");
      p.lid = Field<std::string>(port, "lid");
      p.netdev = Field<std::string>(port, "netdev");
      p.node_guid = Field<std::string>(port, "node_guid");
      p.fw_version = Field<std::string>(port, "fw_version");
      p.board_id = Field<std::string>(port, "board_id");
      p.counters = Counters(port, "counters");
      p.hw_counters = Counters(port, "hw_counters");
      p.ethtool = Counters(port, "ethtool");
      p.xmit_bytes = Field<uint64_t>(port, "xmit_bytes");
      p.rcv_bytes = Field<uint64_t>(port, "rcv_bytes");
      p.saturated = port.value("saturated", std::vector<std::string>{});
      host.ports.push_back(std::move(p));
    }
    for (const nlohmann::json& problem : doc.value("problems", nlohmann::json::array())) {
      host.problems.push_back(
          {problem.at("path").get<std::string>(), problem.at("message").get<std::string>()});
    }
    return host;
  } catch (const std::exception& e) {  // json type errors and the range checks above
    if (why) *why = e.what();
    return std::nullopt;
  }
}

}  // namespace fabtrack
