#include "collector/parse/json_non_finite.h"

namespace fabtrack {

bool StaysInJsonString(char c, bool* escape) {
  if (*escape) {
    *escape = false;
  } else if (c == '\\') {
    *escape = true;
  } else if (c == '"') {
    return false;
  }
  return true;
}

std::string NullBareNonFinite(std::string_view text, bool* changed) {
  std::string out;
  out.reserve(text.size());
  bool in_string = false, escape = false;
  auto is_word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (in_string) {
      in_string = StaysInJsonString(c, &escape);
      out += c;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    if (i == 0 || !is_word(text[i - 1])) {
      for (std::string_view word : {"-inf", "inf", "-nan", "nan"}) {
        size_t end = i + word.size();
        if (text.substr(i, word.size()) == word && (end >= text.size() || !is_word(text[end]))) {
          out += "null";
          i = end - 1;
          replaced = true;
          if (changed) *changed = true;
          break;
        }
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

}  // namespace fabtrack
