// Analyzer thresholds. Every detector declares its settings with defaults;
// a config file overrides them:
//
//   # comments start with '#'
//   [scaling_drop]
//   min_efficiency = 0.8
//   enabled = false        # turns a detector off
//   [cluster]
//   transport = socket     # this cluster's multi-node jobs run over sockets
//
// Unknown sections or keys and malformed values are errors naming file:line,
// so that a typo never silently leaves a default in place.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack::analyzer {

struct Param {
  std::string key;
  double default_value = 0;
  std::string help;
};

class ConfigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The settings of one detector: its declared params with overrides applied.
class DetectorSettings {
 public:
  DetectorSettings() = default;
  explicit DetectorSettings(std::map<std::string, double, std::less<>> values)
      : values_(std::move(values)) {}
  // Throws std::logic_error for an undeclared key (a bug in the detector).
  double operator[](std::string_view key) const;
  const std::map<std::string, double, std::less<>>& values() const { return values_; }

  // What the cluster's config declares about itself ([cluster] transport):
  // "socket" means multi-node traffic over NET/Socket is by design, so the
  // transport detectors note it instead of alarming. Unset: not declared.
  std::optional<std::string> cluster_transport;

 private:
  std::map<std::string, double, std::less<>> values_;
};

struct AnalyzerConfig {
  // Overrides by detector and key; validated against the registry.
  std::map<std::string, std::map<std::string, double, std::less<>>, std::less<>> overrides;
  std::set<std::string, std::less<>> disabled;
  // [cluster] transport = socket|rdma: see DetectorSettings::cluster_transport.
  std::optional<std::string> cluster_transport;

  bool Enabled(std::string_view detector) const { return !disabled.contains(detector); }
  // Declared defaults of `detector` with this config's overrides.
  DetectorSettings SettingsFor(std::string_view detector) const;
};

// Parses a config file's text; `path` is used in error messages only.
// Throws ConfigError("PATH:LINE: ...").
AnalyzerConfig ParseAnalyzerConfig(std::string_view text, const std::string& path);

// The defaults of every registered detector as a commented config file
// (`fabtrack analyze --print-config`).
std::string DefaultConfigText();

}  // namespace fabtrack::analyzer
