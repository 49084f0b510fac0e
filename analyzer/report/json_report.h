// `fabtrack analyze --format json`: {"cluster", "findings": [...]} with every
// field present (null where it does not apply), for scripts and alerting.
#pragma once

#include "analyzer/analyze.h"
#include "core/json_instances.h"

namespace fabtrack::analyzer {

nlohmann::json FindingJson(const Finding& finding);
nlohmann::json AnalysisJson(const AnalysisResult& result);

}  // namespace fabtrack::analyzer
