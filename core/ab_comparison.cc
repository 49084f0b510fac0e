#include "core/ab_comparison.h"

namespace fabtrack {
namespace {

constexpr std::pair<AbOutcome, const char*> kNames[] = {
    {AbOutcome::kNoDifference, "no_difference"}, {AbOutcome::kBFaster, "b_faster"},
    {AbOutcome::kBSlower, "b_slower"},           {AbOutcome::kMixed, "mixed"},
    {AbOutcome::kInconclusive, "inconclusive"},
};

}  // namespace

const char* AbOutcomeName(AbOutcome outcome) {
  for (const auto& [o, name] : kNames) {
    if (o == outcome) return name;
  }
  return "inconclusive";
}

std::optional<AbOutcome> AbOutcomeFromName(const std::string& name) {
  for (const auto& [o, n] : kNames) {
    if (name == n) return o;
  }
  return std::nullopt;
}

}  // namespace fabtrack
