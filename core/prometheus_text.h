// The one escaper of the Prometheus text exposition format (version 0.0.4),
// shared by the port exporter (collector/counters/port_exposition) and the
// analyzer's textfile (analyzer/report/prometheus_textfile). Pure.
#pragma once

#include <string>
#include <string_view>

namespace fabtrack {

// Where escaped text goes: a label value escapes backslash, double quote and
// line feed (as \\, \" and \n); HELP text escapes only backslash and line
// feed. Every other byte is written as it is.
enum class PrometheusText { kLabelValue, kHelp };

// Appends `text` to `out`, escaped for `where`.
void AppendPrometheusEscaped(std::string* out, std::string_view text,
                             PrometheusText where = PrometheusText::kLabelValue);
// `text` escaped as a label value.
std::string EscapePrometheusLabel(std::string_view text);

}  // namespace fabtrack
