// Doubles to and from the short decimals that logs and tables are made of
// ("12.34", "0.05", "1048576"), byte-for-byte as the standard library would
// write and read them, without its general algorithms on the common case.
//
// Why: a month of nccl-tests tables is mostly such numbers; std::to_chars'
// shortest-round-trip search was 15% of `fabtrack parse --format json`'s
// instructions and std::from_chars 5% of every parse, for values whose
// shortest form is just their few printed digits.
#pragma once

#include <optional>
#include <string_view>

namespace fabtrack {

// Exactly what std::from_chars(first, last, value) (chars_format::general)
// gives for the whole of `text`, or nullopt where it fails or leaves
// characters unread. Plain decimals of at most 15 digits are read directly
// (one correctly rounded division of two exact doubles, Clinger's fast
// path); anything else (exponents, nan, inf, long mantissas) goes to
// std::from_chars.
std::optional<double> ParseDecimal(std::string_view text);

// Writes what std::to_chars(first, last, value) (shortest round trip, the
// shorter of fixed and scientific, fixed on a tie) writes, into `out`
// (at least 32 chars); returns the end. Values with a short decimal form
// are written directly; the rest by std::to_chars.
char* FormatShortest(double value, char* out);

}  // namespace fabtrack
