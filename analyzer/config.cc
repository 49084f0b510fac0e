#include "analyzer/config.h"

#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <sstream>

#include "analyzer/detector.h"

namespace fabtrack::analyzer {
namespace {

std::string_view Trim(std::string_view s) {
  const char* ws = " \t\r";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// The shortest decimal text that reads back as exactly `v` (0.05, not
// 0.050000000000000003; 67108864, not 6.71089e+07).
std::string ShortestText(double v) {
  char buf[40];
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

const DetectorInfo* FindDetector(std::string_view name) {
  for (const DetectorInfo& d : Detectors()) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

}  // namespace

double DetectorSettings::operator[](std::string_view key) const {
  auto it = values_.find(key);
  if (it == values_.end())
    throw std::logic_error("undeclared analyzer setting " + std::string(key));
  return it->second;
}

DetectorSettings AnalyzerConfig::SettingsFor(std::string_view detector) const {
  std::map<std::string, double, std::less<>> values;
  if (const DetectorInfo* info = FindDetector(detector)) {
    for (const Param& p : info->params) values[p.key] = p.default_value;
  }
  if (auto it = overrides.find(detector); it != overrides.end()) {
    for (const auto& [k, v] : it->second) values[k] = v;
  }
  DetectorSettings settings(std::move(values));
  settings.cluster_transport = cluster_transport;
  return settings;
}

AnalyzerConfig ParseAnalyzerConfig(std::string_view text, const std::string& path) {
  AnalyzerConfig config;
  const DetectorInfo* section = nullptr;
  bool cluster_section = false;  // [cluster]: declarations about the cluster, not a detector
  int line_no = 0;
  auto fail = [&](const std::string& what) -> ConfigError {
    return ConfigError(path + ":" + std::to_string(line_no) + ": " + what);
  };
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t nl = text.find('\n', pos);
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? nl : nl - pos);
    pos = nl == std::string_view::npos ? text.size() + 1 : nl + 1;
    ++line_no;
    if (size_t hash = line.find('#'); hash != std::string_view::npos) line = line.substr(0, hash);
    line = Trim(line);
    if (line.empty()) continue;
    if (line.front() == '[') {
      if (line.back() != ']') throw fail("unterminated section header");
      std::string_view name = Trim(line.substr(1, line.size() - 2));
      cluster_section = name == "cluster";
      section = cluster_section ? nullptr : FindDetector(name);
      if (cluster_section) continue;
      if (!section) throw fail("unknown detector '" + std::string(name) + "'");
      continue;
    }
    size_t eq = line.find('=');
    if (eq == std::string_view::npos) throw fail("expected 'key = value'");
    std::string_view key = Trim(line.substr(0, eq));
    std::string_view value = Trim(line.substr(eq + 1));
    if (cluster_section) {
      if (key != "transport")
        throw fail("unknown setting '" + std::string(key) + "' for [cluster]");
      if (value != "socket" && value != "rdma") {
        throw fail("transport must be socket or rdma, not '" + std::string(value) + "'");
      }
      config.cluster_transport = std::string(value);
      continue;
    }
    if (!section) throw fail("setting outside a [detector] section");
    if (key == "enabled") {
      if (value == "true") {
        config.disabled.erase(section->name);
      } else if (value == "false") {
        config.disabled.insert(section->name);
      } else {
        throw fail("enabled must be true or false, not '" + std::string(value) + "'");
      }
      continue;
    }
    bool declared = false;
    for (const Param& p : section->params) declared |= p.key == key;
    if (!declared) {
      throw fail("unknown setting '" + std::string(key) + "' for detector " + section->name);
    }
    double number = 0;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), number);
    if (ec != std::errc() || end != value.data() + value.size() || !std::isfinite(number)) {
      throw fail("'" + std::string(key) + "' needs a number, not '" + std::string(value) + "'");
    }
    config.overrides[section->name][std::string(key)] = number;
  }
  return config;
}

std::string DefaultConfigText() {
  std::ostringstream out;
  out << "# fabtrack analyzer settings (defaults). Copy, edit, pass with --config.\n";
  out << "\n# What the cluster is built for: socket accepts multi-node traffic over\n"
         "# NET/Socket (noted, not alarmed); rdma (or unset) expects IB/RoCE.\n"
         "[cluster]\n# transport = rdma\n";
  for (const DetectorInfo& d : Detectors()) {
    out << "\n# " << d.summary << "\n[" << d.name << "]\n# enabled = true\n";
    for (const Param& p : d.params) {
      out << "# " << p.help << "\n" << p.key << " = " << ShortestText(p.default_value) << "\n";
    }
  }
  return out.str();
}

}  // namespace fabtrack::analyzer
