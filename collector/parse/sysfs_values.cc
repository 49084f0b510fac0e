#include "collector/parse/sysfs_values.h"

#include <algorithm>
#include <charconv>
#include <limits>

namespace fabtrack {

std::optional<uint64_t> ParseSysfsCounter(std::string_view s) {
  if (s.empty()) return std::nullopt;
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

void ParseSysfsCoded(std::string_view s, std::optional<std::string>* text,
                     std::optional<int>* code) {
  size_t colon = s.find(':');
  if (colon != std::string_view::npos) {
    int v = 0;
    auto [end, ec] = std::from_chars(s.data(), s.data() + colon, v);
    if (ec == std::errc() && end == s.data() + colon) {
      *code = v;
      s.remove_prefix(colon + 1);
      while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
    }
  }
  if (!s.empty()) *text = std::string(s);
}

std::optional<double> ParseSysfsRateGbps(std::string_view s) {
  double v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end == s.data()) return std::nullopt;
  std::string_view rest(end, s.data() + s.size() - end);
  while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
  if (rest.substr(0, 6) != "Gb/sec") return std::nullopt;
  return v;
}

void FinishSysfsPort(const std::vector<std::string>& widened, PortSample* s) {
  const bool extended_set =
      s->counters.count("unicast_xmit_packets") + s->counters.count("unicast_rcv_packets") > 0;
  s->saturated.clear();
  for (const auto& [name, value] : s->counters) {
    if (value == kSysfsMax64) s->saturated.push_back(name);  // any counter: stuck or garbage
  }
  for (const SysfsLegacyCounter& c : kSysfsLegacyCounters) {
    auto it = s->counters.find(c.name);
    if (it == s->counters.end() || it->second != c.max) continue;
    if (c.data &&
        (extended_set || std::find(widened.begin(), widened.end(), c.name) != widened.end())) {
      continue;
    }
    s->saturated.emplace_back(c.name);
  }
  std::sort(s->saturated.begin(), s->saturated.end());

  // port_{xmit,rcv}_data count 4-octet words (IBA PortXmitData/PortRcvData).
  auto bytes = [&](const char* name) -> std::optional<uint64_t> {
    auto it = s->counters.find(name);
    if (it == s->counters.end() || it->second > std::numeric_limits<uint64_t>::max() / 4) {
      return std::nullopt;
    }
    return it->second * 4;
  };
  s->xmit_bytes = bytes("port_xmit_data");
  s->rcv_bytes = bytes("port_rcv_data");
}

}  // namespace fabtrack
