#include "collector/counters/hw_counter_selection.h"

#include <algorithm>

#include "core/text.h"

namespace fabtrack {

bool HwCounterSelection::Wants(std::string_view name) const {
  switch (mode) {
    case Mode::kAll:
      return true;
    case Mode::kNone:
      return false;
    case Mode::kListed:
      return std::binary_search(names.begin(), names.end(), name, std::less<>());
  }
  return false;
}

std::optional<HwCounterSelection> ParseHwCounterSelection(std::string_view text, std::string* why) {
  HwCounterSelection s;
  if (text == "all") return s;
  if (text == "none") {
    s.mode = HwCounterSelection::Mode::kNone;
    return s;
  }
  s.mode = HwCounterSelection::Mode::kListed;
  for (const std::string_view name : Split(text, ',')) {
    if (name.empty()) {
      *why = "\"" + std::string(text) + "\": an empty name (all, none or NAME[,NAME...])";
      return std::nullopt;
    }
    if (name == "all" || name == "none") {
      *why = "\"" + std::string(name) + "\" cannot be part of a list of counter names";
      return std::nullopt;
    }
    if (name == "." || name == ".." || name.find('/') != std::string_view::npos ||
        name.find('\0') != std::string_view::npos) {
      *why = "\"" + std::string(name) + "\" is not a file name of hw_counters/";
      return std::nullopt;
    }
    if (name == "lifespan") {
      *why = "lifespan is the driver's update interval (a setting), not a counter";
      return std::nullopt;
    }
    s.names.emplace_back(name);
  }
  std::sort(s.names.begin(), s.names.end());
  s.names.erase(std::unique(s.names.begin(), s.names.end()), s.names.end());
  return s;
}

std::string FormatHwCounterSelection(const HwCounterSelection& selection) {
  switch (selection.mode) {
    case HwCounterSelection::Mode::kAll:
      return "all";
    case HwCounterSelection::Mode::kNone:
      return "none";
    case HwCounterSelection::Mode::kListed:
      return Join(selection.names, ",");
  }
  return "all";
}

std::vector<std::string> MissingHwCounters(const HwCounterSelection& selection,
                                           const std::vector<std::string>& present) {
  std::vector<std::string> missing;
  if (selection.mode != HwCounterSelection::Mode::kListed) return missing;
  for (const std::string& name : selection.names) {
    if (std::find(present.begin(), present.end(), name) == present.end()) missing.push_back(name);
  }
  return missing;
}

}  // namespace fabtrack
