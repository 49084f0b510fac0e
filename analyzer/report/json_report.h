// `fabtrack analyze --format json`: {"cluster", "findings": [...]} with every
// field present (null where it does not apply), for scripts and alerting.
#pragma once

#include <nlohmann/json.hpp>

#include "analyzer/analyze.h"

namespace fabtrack::analyzer {

nlohmann::json FindingJson(const Finding& finding);
nlohmann::json AnalysisJson(const AnalysisResult& result);

}  // namespace fabtrack::analyzer
