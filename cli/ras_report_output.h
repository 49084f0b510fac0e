// The verdict of one NCCL RAS report as `ras status` (a live RAS thread) and
// `ras read` (a saved report) print it: one summary line, then each finding
// with the processes and ranks it names; or the same as one JSON document.
// Where the report came from is the caller's to say.
#pragma once

#include <string>

#include "collector/ras/ras_report.h"
#include "core/json_instances.h"

namespace fabtrack::cli {

struct RasReportSource {
  std::string title;      // "RAS at localhost:28028", "RAS report hang.txt"
  nlohmann::json fields;  // merged into the JSON: {"host", "port"} or {"file"}
};

// `format` is the report's own ("text" or "json"), `body` the report as
// received or read, printed after the summary when `verbose`.
void PrintRasVerdictText(const RasReportSource& source, const ras::Report& report,
                         const std::string& format, const std::string& body,
                         const ras::Verdict& verdict, bool verbose);
void PrintRasVerdictJson(const RasReportSource& source, const ras::Report& report,
                         const std::string& format, const std::string& body,
                         const ras::Verdict& verdict, bool verbose);

}  // namespace fabtrack::cli
