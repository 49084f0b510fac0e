// printf's "%lf" writes infinities as bare inf/-inf (and NaN as nan when not
// quoted), which is not JSON; nccl-tests' JSON report and Inspector's JSON
// lines both carry them. One cleanup for both, read as null (absent).
#pragma once

#include <string>
#include <string_view>

namespace fabtrack {

// One character of a JSON string's body (after its opening quote): follows
// backslash escapes in *escape; false when `c` is the closing quote.
bool StaysInJsonString(char c, bool* escape);

// `text` with every bare -inf, inf, -nan or nan word outside strings replaced
// by null; the rest, line breaks included, unchanged. Sets *changed (when
// given) if there were any.
std::string NullBareNonFinite(std::string_view text, bool* changed = nullptr);

}  // namespace fabtrack
