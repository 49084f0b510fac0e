// Which driver hw_counters/ files a reading of the ports reads
// (`--hw-counters all|none|NAME[,NAME...]`). sysfs answers one read(2) per
// value and the kernel's read path is most of a scrape's cost, so the only
// saving left is not reading what the operator does not want: mlx5 puts ~20
// hw_counters beside the ~24 counters/ and port attributes of each port.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

struct HwCounterSelection {
  enum class Mode { kAll, kNone, kListed };
  Mode mode = Mode::kAll;
  std::vector<std::string> names;  // kListed: the names, sorted, no duplicates

  // Whether hw_counters/<name> is read.
  bool Wants(std::string_view name) const;
  // Whether hw_counters/ is read at all.
  bool ReadsAny() const { return mode != Mode::kNone; }

  friend bool operator==(const HwCounterSelection&, const HwCounterSelection&) = default;
};

// "all", "none" or a comma-separated list of hw_counters/ file names
// ("out_of_buffer,out_of_sequence"). nullopt with *why set for an empty
// list item, a name that cannot be a file of hw_counters/ ("a/b", ".."),
// "all" or "none" inside a list, and "lifespan" (the driver's update
// interval, a setting that is never exported).
std::optional<HwCounterSelection> ParseHwCounterSelection(std::string_view text, std::string* why);

// The option's text back: "all", "none" or "a,b" (names sorted).
std::string FormatHwCounterSelection(const HwCounterSelection& selection);

// The listed names that are not in `present` (sorted), e.g. the names no
// port of the host has: mlx5 in InfiniBand and in RoCE mode have different
// sets, so a missing name is a warning, not an error. Empty unless kListed.
std::vector<std::string> MissingHwCounters(const HwCounterSelection& selection,
                                           const std::vector<std::string>& present);

}  // namespace fabtrack
