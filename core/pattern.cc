#include "core/pattern.h"

#include <iterator>
#include <regex>

namespace fabtrack {

struct Pattern::Compiled {
  std::regex regex;
};

namespace {

void CopyGroups(const std::cmatch& m, std::vector<std::optional<std::string>>* groups) {
  groups->clear();
  groups->reserve(m.size());
  for (const std::csub_match& sub : m) {
    groups->push_back(sub.matched ? std::optional<std::string>(sub.str()) : std::nullopt);
  }
}

}  // namespace

std::string PatternMatch::str(size_t i) const {
  return i < groups_.size() && groups_[i] ? *groups_[i] : std::string();
}

bool PatternMatch::matched(size_t i) const { return i < groups_.size() && groups_[i]; }

Pattern::Pattern(std::string_view expression, Case letter_case)
    : compiled_(std::make_unique<Compiled>(Compiled{
          std::regex(expression.begin(), expression.end(),
                     letter_case == Case::kInsensitive ? std::regex::ECMAScript | std::regex::icase
                                                       : std::regex::ECMAScript)})) {}

Pattern::~Pattern() = default;

bool Pattern::Matches(std::string_view text, PatternMatch* match) const {
  std::cmatch m;
  if (!std::regex_match(text.data(), text.data() + text.size(), m, compiled_->regex)) {
    return false;
  }
  if (match != nullptr) CopyGroups(m, &match->groups_);
  return true;
}

bool Pattern::Search(std::string_view text, PatternMatch* match) const {
  std::cmatch m;
  if (!std::regex_search(text.data(), text.data() + text.size(), m, compiled_->regex)) {
    return false;
  }
  if (match != nullptr) CopyGroups(m, &match->groups_);
  return true;
}

std::string Pattern::ReplaceAll(std::string_view text, std::string_view format) const {
  std::string out;
  std::regex_replace(std::back_inserter(out), text.begin(), text.end(), compiled_->regex,
                     std::string(format));
  return out;
}

}  // namespace fabtrack
