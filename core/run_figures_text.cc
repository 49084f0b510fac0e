#include "core/run_figures_text.h"

#include <charconv>
#include <limits>

namespace fabtrack {
namespace {

struct Cursor {
  std::string_view text;
  size_t at = 0;

  void SkipSpace() {
    while (at < text.size() &&
           (text[at] == ' ' || text[at] == '\n' || text[at] == '\t' || text[at] == '\r')) {
      ++at;
    }
  }
  // Skips space, then consumes `c` if it is next.
  bool Take(char c) {
    SkipSpace();
    if (at < text.size() && text[at] == c) {
      ++at;
      return true;
    }
    return false;
  }
  std::optional<std::string_view> Key() {
    if (!Take('"')) return std::nullopt;
    const size_t end = text.find_first_of("\"\\", at);
    if (end == std::string_view::npos || text[end] != '"') return std::nullopt;
    std::string_view key = text.substr(at, end - at);
    at = end + 1;
    return key;
  }
  std::optional<double> Number() {
    SkipSpace();
    if (text.substr(at, 4) == "null") {
      at += 4;
      return std::numeric_limits<double>::quiet_NaN();
    }
    // JSON has no leading '+', no "inf"/"nan", no hex: from_chars takes none
    // of the first and only reads the others when spelled out, which JSON
    // forbids and PostgreSQL never prints.
    if (at >= text.size() || !(text[at] == '-' || (text[at] >= '0' && text[at] <= '9'))) {
      return std::nullopt;
    }
    double value = 0;
    auto [end, ec] = std::from_chars(text.data() + at, text.data() + text.size(), value);
    if (ec != std::errc()) return std::nullopt;
    at = static_cast<size_t>(end - text.data());
    return value;
  }
};

}  // namespace

std::optional<std::map<std::string, std::vector<double>>> ParseRunFiguresText(
    std::string_view text) {
  Cursor c{text};
  std::map<std::string, std::vector<double>> figures;
  if (!c.Take('{')) return std::nullopt;
  if (!c.Take('}')) {
    do {
      std::optional<std::string_view> key = c.Key();
      if (!key || !c.Take(':') || !c.Take('[')) return std::nullopt;
      std::vector<double>& numbers = figures[std::string(*key)];
      numbers.clear();  // a repeated key: the last one counts, as in JSON parsers
      if (!c.Take(']')) {
        do {
          std::optional<double> n = c.Number();
          if (!n) return std::nullopt;
          numbers.push_back(*n);
        } while (c.Take(','));
        if (!c.Take(']')) return std::nullopt;
      }
    } while (c.Take(','));
    if (!c.Take('}')) return std::nullopt;
  }
  c.SkipSpace();
  if (c.at != text.size()) return std::nullopt;
  return figures;
}

}  // namespace fabtrack
