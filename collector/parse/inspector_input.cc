#include "collector/parse/inspector_input.h"

#include <charconv>
#include <cmath>

#include "core/bus_bandwidth.h"

namespace fabtrack::inspector_internal {

std::string Quote(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (s.size() > 40) out += "...";
  return out + "'";
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

std::string TooLong(size_t bytes) {
  return "line is " + std::to_string(bytes) + " bytes, over the " +
         std::to_string(kInspectorMaxLineBytes) + "-byte limit; skipped";
}

std::string CollectiveName(std::string_view raw) {
  if (auto c = CanonicalCollective(raw)) return *c;
  if (raw == "Send") return "send";
  if (raw == "Recv") return "recv";
  if (raw == "AllGatherV") return "all_gather_v";
  if (raw == "All2All") return "alltoall";  // the core splits it as "all2_all"
  return std::string(raw);
}

std::optional<uint64_t> ParseHex(std::string_view s) {
  if (s.size() < 3 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X')) return std::nullopt;
  uint64_t v = 0;
  auto [p, ec] = std::from_chars(s.data() + 2, s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> DoubleToInt64(double d) {
  if (!std::isfinite(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

}  // namespace fabtrack::inspector_internal
