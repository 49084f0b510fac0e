// Lexer for one NCCL debug line: "host:pid:tid [dev] NCCL INFO msg",
// "host:pid:tid [dev] file.cc:123 NCCL WARN msg", prefix-less "[0] NCCL INFO msg"
// or "NCCL INFO msg", and the bare "NCCL version 2.19.3+cuda12.3" banner.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace fabtrack {

struct NcclLogLine {
  std::string host;  // "" when the host field is empty or stripped
  std::optional<int64_t> pid;
  std::optional<int64_t> tid;
  std::optional<int> cuda_device;  // "[3]"
  std::string level;               // "INFO", "WARN", "TRACE", "ERROR", or "VERSION" for the banner
  std::string source_location;     // "init.cc:1798" when printed, else ""
  std::string message;             // text after "NCCL <LEVEL> "
};

// Returns the split line, or nullopt when the text is not an NCCL debug line.
// `text` is a cleaned line (launcher prefixes already removed).
std::optional<NcclLogLine> SplitNcclLogLine(std::string_view text);

inline bool IsNcclLogLine(std::string_view text) { return SplitNcclLogLine(text).has_value(); }

}  // namespace fabtrack
