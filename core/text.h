// Small text helpers that several layers print with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// items joined by separator: Join({"a", "b"}, ", ") is "a, b"; none is "".
std::string Join(const std::vector<std::string>& items, std::string_view separator);

}  // namespace fabtrack
