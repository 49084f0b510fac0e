#include "analyzer/detector.h"

#include <algorithm>

namespace fabtrack::analyzer {
namespace {

std::vector<DetectorInfo>& Registry() {
  static std::vector<DetectorInfo> registry;
  return registry;
}

}  // namespace

DetectorRegistrar::DetectorRegistrar(DetectorInfo info) {
  auto& registry = Registry();
  auto at =
      std::lower_bound(registry.begin(), registry.end(), info.name,
                       [](const DetectorInfo& d, const std::string& n) { return d.name < n; });
  registry.insert(at, std::move(info));
}

const std::vector<DetectorInfo>& Detectors() { return Registry(); }

}  // namespace fabtrack::analyzer
