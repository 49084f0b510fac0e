// What the two Inspector parsers (inspector_json_lines.cc,
// inspector_prometheus.cc) share: line splitting, bounded error lists, and
// the readers of values both formats carry. Internal to collector/parse.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/parse/inspector_parser.h"

namespace fabtrack::inspector_internal {

// Collects one file's errors. A file of garbage would otherwise yield one
// error per line, millions for a large file.
class Errors {
 public:
  Errors(std::string_view file, std::vector<InspectorError>* out) : file_(file), out_(out) {}
  // Call once, at the end.
  void Finish() {
    if (dropped_ > 0) {
      out_->push_back({file_, 0, std::to_string(dropped_) + " more error(s) not listed"});
    }
  }
  void Add(int line, std::string message) {
    if (listed_ < kInspectorMaxErrors) {
      out_->push_back({file_, line, std::move(message)});
      ++listed_;
    } else {
      ++dropped_;
    }
  }

 private:
  std::string file_;
  std::vector<InspectorError>* out_;
  size_t listed_ = 0;
  size_t dropped_ = 0;
};

struct Line {
  int number = 0;
  std::string_view text;
  bool terminated = false;  // followed by '\n'
};

// Calls f for every line, '\r' of CRLF removed. Line numbers saturate
// instead of overflowing on absurd inputs.
template <typename F>
void ForEachLine(std::string_view text, F f) {
  size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool terminated = nl != std::string_view::npos;
    size_t end = terminated ? nl : text.size();
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (number < INT_MAX) ++number;
    f(Line{number, l, terminated});
    pos = terminated ? nl + 1 : text.size();
  }
}

// A value from the input, quoted for a message: short, and printable even
// when the input is binary.
std::string Quote(std::string_view s);
bool IsBlank(std::string_view s);
// The error for a line over kInspectorMaxLineBytes.
std::string TooLong(size_t bytes);
// Inspector's names (ncclFuncToString) in fabtrack's spelling; the core table
// knows the collectives, not the point-to-point operations.
std::string CollectiveName(std::string_view raw);
// "0x..." to its value; nullopt when not hexadecimal.
std::optional<uint64_t> ParseHex(std::string_view s);
// Only doubles in [-2^63, 2^63) convert to int64 without UB; nullopt for others.
std::optional<int64_t> DoubleToInt64(double d);

// No collective of a working job runs for a day; a larger time is a timer
// difference that wrapped around (stop read before start), not a measurement.
constexpr int64_t kMaxExecTimeUs = 86'400'000'000;

// The parsers of the two formats (inspector_json_lines.cc,
// inspector_prometheus.cc): ParseInspectorJsonLines and
// ParseInspectorPrometheus.
InspectorParseResult ParseJsonLines(std::string_view text, std::string_view file_name);
InspectorParseResult ParseTextfile(std::string_view text, std::string_view file_name);

}  // namespace fabtrack::inspector_internal
