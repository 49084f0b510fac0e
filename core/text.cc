#include "core/text.h"

#include <cstdio>

namespace fabtrack {

std::string Join(const std::vector<std::string>& items, std::string_view separator) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += separator;
    out += items[i];
  }
  return out;
}

std::vector<std::string_view> Split(std::string_view text, char separator) {
  std::vector<std::string_view> out;
  while (true) {
    const size_t at = text.find(separator);
    out.push_back(text.substr(0, at));
    if (at == std::string_view::npos) return out;
    text.remove_prefix(at + 1);
  }
}

std::string_view TrimBlanks(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t' || text.back() == '\r')) {
    text.remove_suffix(1);
  }
  return text;
}

std::vector<std::string_view> SplitBlanks(std::string_view text, std::string_view blanks) {
  std::vector<std::string_view> out;
  size_t at = text.find_first_not_of(blanks);
  while (at != std::string_view::npos) {
    const size_t end = text.find_first_of(blanks, at);
    out.push_back(text.substr(at, end == std::string_view::npos ? end : end - at));
    at = text.find_first_not_of(blanks, end);
  }
  return out;
}

std::string FormatFixed(double value, int digits) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", digits, value);
  return text;
}

}  // namespace fabtrack
