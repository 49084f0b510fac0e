#include "collector/parse/inspector_parser.h"

#include "collector/parse/inspector_input.h"

// The formats' parsers are in inspector_json_lines.cc and
// inspector_prometheus.cc, their shared readers in inspector_input.h, the
// summary in inspector_summary.cc.

namespace fabtrack {

std::string InspectorError::ToString() const {
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

InspectorParseResult ParseInspectorJsonLines(std::string_view text, std::string_view file_name) {
  return inspector_internal::ParseJsonLines(text, file_name);
}

InspectorParseResult ParseInspectorPrometheus(std::string_view text, std::string_view file_name) {
  return inspector_internal::ParseTextfile(text, file_name);
}

InspectorParseResult ParseInspectorFile(std::string_view text, std::string_view file_name) {
  if (file_name.ends_with(".prom")) return ParseInspectorPrometheus(text, file_name);
  return ParseInspectorJsonLines(text, file_name);
}

}  // namespace fabtrack
