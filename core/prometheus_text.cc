#include "core/prometheus_text.h"

namespace fabtrack {

void AppendPrometheusEscaped(std::string* out, std::string_view text, PrometheusText where) {
  const bool label = where == PrometheusText::kLabelValue;
  // Almost every value needs no escaping: one scan, one append. A plain
  // loop rather than find_first_of, which calls memchr over the set once
  // per byte of text (a third of a scrape's user-space instructions).
  size_t clean = 0;
  while (clean < text.size()) {
    const char c = text[clean];
    if (c == '\\' || c == '\n' || (c == '"' && label)) break;
    ++clean;
  }
  out->append(text.substr(0, clean));
  if (clean == text.size()) return;
  for (char c : text.substr(clean)) {
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
