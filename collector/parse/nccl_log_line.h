// Lexer for one NCCL debug line. NCCL writes
//   "host:pid:tid [dev] NCCL INFO msg"
//   "host:pid:tid [dev] file.cc:123 NCCL WARN msg"
// and the bare "NCCL version 2.19.3+cuda12.3" banner. The grammar is strict,
// because a line that merely mentions "NCCL INFO" (a PyTorch or DeepSpeed
// message, a markdown header, README prose) must not become a host:
//   line   := decoration* [prefix] "NCCL " LEVEL (" " message | end)
//   prefix := [tag] host ":" pid ":" tid " [" dev "]" location*
//           | "[" dev "]" location*          (host:pid:tid stripped)
//           | location                       (stripped WARN: "net_ib.cc:12")
// where decorations are what launchers and loggers put in front (Open MPI's
// "[1,0]<stdout>:", srun's "0:", pdsh's "node-1:", "[rank]", timestamps), the
// host may be empty (":pid:tid") and anything else before the level makes the
// line not an NCCL line at all.
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

// The same fields as views into the text that was split: what the streaming
// parse uses, so a log line costs no allocation (every line of a month of
// nightly logs passes here).
struct NcclLogLineView {
  std::string_view host;
  std::optional<int64_t> pid;
  std::optional<int64_t> tid;
  std::optional<int> cuda_device;
  std::string_view level;
  std::string_view source_location;
  std::string_view message;

  NcclLogLine ToLine() const;
  static NcclLogLineView Of(const NcclLogLine& line);
};

// Returns the split line, or nullopt when the text is not an NCCL debug line.
// `text` is a cleaned line (launcher prefixes at its start already removed).
std::optional<NcclLogLine> SplitNcclLogLine(std::string_view text);

// SplitNcclLogLine without copies: false when the text is not an NCCL debug
// line; otherwise `*out` views `text`.
bool SplitNcclLogLineView(std::string_view text, NcclLogLineView* out);

inline bool IsNcclLogLine(std::string_view text) { return SplitNcclLogLine(text).has_value(); }

}  // namespace fabtrack
