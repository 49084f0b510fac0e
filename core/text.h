// Small text helpers that several layers print with.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// items joined by separator: Join({"a", "b"}, ", ") is "a, b"; none is "".
std::string Join(const std::vector<std::string>& items, std::string_view separator);

// text cut at every separator, empty items kept (callers judge them):
// Split("a,,b", ',') is {"a", "", "b"}; Split("", ',') is {""}. The views
// point into text.
std::vector<std::string_view> Split(std::string_view text, char separator);

// text without the spaces and tabs around it (and a trailing '\r' of a
// CRLF line): TrimBlanks(" a b\t\r") is "a b". The view points into text.
std::string_view TrimBlanks(std::string_view text);

// The words of text: the runs between any of the `blanks`, none empty:
// SplitBlanks(" a  b\tc") is {"a", "b", "c"}; SplitBlanks("a\tb", " ") is
// {"a\tb"}. The views point into text.
std::vector<std::string_view> SplitBlanks(std::string_view text, std::string_view blanks = " \t");

// value with `digits` decimals, as printf's "%.*f": FormatFixed(12.5, 2) is
// "12.50".
std::string FormatFixed(double value, int digits);

}  // namespace fabtrack
