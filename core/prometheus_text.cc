#include "core/prometheus_text.h"

namespace fabtrack {

void AppendPrometheusEscaped(std::string* out, std::string_view text, PrometheusText where) {
  const bool label = where == PrometheusText::kLabelValue;
  // Almost every value needs no escaping: one scan, one append.
  if (text.find_first_of(label ? std::string_view("\\\n\"") : std::string_view("\\\n")) ==
      std::string_view::npos) {
    out->append(text);
    return;
  }
  for (char c : text) {
    if (c == '\\') {
      out->append("\\\\");
    } else if (c == '\n') {
      out->append("\\n");
    } else if (c == '"' && label) {
      out->append("\\\"");
    } else {
      out->push_back(c);
    }
  }
}

std::string EscapePrometheusLabel(std::string_view text) {
  std::string out;
  AppendPrometheusEscaped(&out, text);
  return out;
}

}  // namespace fabtrack
