// A regular expression (std::regex, ECMAScript grammar) whose machinery is
// compiled in one unit, core/pattern.cc. std::regex is templates through and
// through: each unit that matched with it instantiated and optimised its
// compiler and executor again (~220 KB of machine code in four objects of a
// fresh build, ~6 CPU-s each; issue 33, BENCHMARKS.md "Fresh build CPU").
// The semantics are std::regex's: Matches is std::regex_match, Search is
// std::regex_search, ReplaceAll is std::regex_replace.
#pragma once

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// The submatches of a successful match: 0 is the whole match, i the i-th
// group.
class PatternMatch {
 public:
  // The text of submatch i; empty when it took no part in the match.
  std::string str(size_t i) const;
  // Whether submatch i took part in the match (std::sub_match::matched).
  bool matched(size_t i) const;

 private:
  friend class Pattern;
  std::vector<std::optional<std::string>> groups_;
};

class Pattern {
 public:
  enum class Case { kSensitive, kInsensitive };
  // Throws std::regex_error for an invalid expression (as std::regex).
  explicit Pattern(std::string_view expression, Case letter_case = Case::kSensitive);
  ~Pattern();
  Pattern(const Pattern&) = delete;
  Pattern& operator=(const Pattern&) = delete;

  // Whether the whole of text matches; fills *match when given.
  bool Matches(std::string_view text, PatternMatch* match = nullptr) const;
  // Whether some part of text matches; fills *match (the first match) when given.
  bool Search(std::string_view text, PatternMatch* match = nullptr) const;
  // text with every match replaced by format ($1, $& ... as std::regex_replace).
  std::string ReplaceAll(std::string_view text, std::string_view format) const;

 private:
  struct Compiled;
  std::unique_ptr<Compiled> compiled_;
};

}  // namespace fabtrack
