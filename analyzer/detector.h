// The detector interface and registry. Each detector lives in its own file
// under detectors/ and registers itself with a DetectorRegistrar; the
// detectors library is linked whole-archive so every registration runs.
// Detectors are pure: input and settings in, findings out.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "analyzer/config.h"
#include "analyzer/input_index.h"
#include "core/finding.h"

namespace fabtrack::analyzer {

using DetectFn = void (*)(const InputIndex& input, const DetectorSettings& settings,
                          std::vector<Finding>* findings);

struct DetectorInfo {
  std::string name;     // also the findings' kind unless the detector sets its own
  std::string summary;  // one line for `fabtrack analyze --list-detectors`
  std::vector<Param> params;
  DetectFn detect = nullptr;
};

class DetectorRegistrar {
 public:
  explicit DetectorRegistrar(DetectorInfo info);
};

// Every registered detector, sorted by name.
const std::vector<DetectorInfo>& Detectors();

}  // namespace fabtrack::analyzer
