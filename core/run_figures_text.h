// The stored text of one run's figures (schema 015 analysis_run_summaries:
// {"key": [number or null, ...], ...}, as PostgreSQL prints the jsonb) back
// into figures. A night's analysis reads one such row per history run (14k
// for three years of 13 node counts), and a general JSON parser spent more
// on them than the rest of the load; this reads that shape only.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// The figures of `text`; null reads as NaN. nullopt when `text` is not an
// object of arrays of numbers and nulls with plain keys (no escapes): such a
// row is no summary, and the analysis reads the run's rows instead.
std::optional<std::map<std::string, std::vector<double>>> ParseRunFiguresText(
    std::string_view text);

}  // namespace fabtrack
