#include "collector/parse/nccl_log_line.h"

#include <charconv>

namespace fabtrack {
namespace {

constexpr std::string_view kLevels[] = {"INFO", "WARN", "TRACE", "ERROR", "ABORT"};

std::optional<int64_t> ToInt(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// Host names hold no blanks, so anything before the last blank is a prefix:
// NCCL_DEBUG_TIMESTAMP_FORMAT output ("[2025-01-02 10:11:12] host:pid:tid",
// on by default for WARN since 2.23) or a logger's tag.
std::string_view LastWord(std::string_view s) {
  size_t blank = s.find_last_of(" \t");
  return blank == std::string_view::npos ? s : s.substr(blank + 1);
}

// Drops a leading "[...] " timestamp whose content is not a bare number (a
// bare "[3]" is the CUDA device field of a host-less line).
std::string_view StripBracketTimestamp(std::string_view text) {
  if (text.empty() || text.front() != '[') return text;
  size_t close = text.find("] ");
  if (close == std::string_view::npos || ToInt(text.substr(1, close - 1))) return text;
  return Trim(text.substr(close + 1));
}

// Finds " NCCL <LEVEL> " (or "NCCL <LEVEL> " at start); returns position of "NCCL".
size_t FindMarker(std::string_view text, std::string* level) {
  size_t from = 0;
  while (true) {
    size_t pos = text.find("NCCL ", from);
    if (pos == std::string_view::npos) return pos;
    if (pos == 0 || text[pos - 1] == ' ') {
      std::string_view rest = text.substr(pos + 5);
      for (std::string_view lv : kLevels) {
        if (rest.substr(0, lv.size()) == lv &&
            (rest.size() == lv.size() || rest[lv.size()] == ' ')) {
          *level = std::string(lv);
          return pos;
        }
      }
    }
    from = pos + 1;
  }
}

// Parses "host:pid:tid [dev]" (any part may be odd); fills what it can.
void ParseHead(std::string_view head, NcclLogLine* out) {
  head = Trim(head);
  // Optional "[dev]" at the end.
  if (!head.empty() && head.back() == ']') {
    size_t open = head.rfind('[');
    if (open != std::string_view::npos) {
      if (auto dev = ToInt(head.substr(open + 1, head.size() - open - 2))) {
        out->cuda_device = static_cast<int>(*dev);
      }
      head = Trim(head.substr(0, open));
    }
  }
  // "host:pid:tid" — the host itself may hold colons only in odd cases; split
  // from the right.
  size_t c2 = head.rfind(':');
  if (c2 == std::string_view::npos) {
    out->host = std::string(head);
    return;
  }
  size_t c1 = c2 == 0 ? std::string_view::npos : head.rfind(':', c2 - 1);
  auto tid = ToInt(head.substr(c2 + 1));
  if (c1 != std::string_view::npos) {
    auto pid = ToInt(head.substr(c1 + 1, c2 - c1 - 1));
    if (pid && tid) {
      out->host = std::string(LastWord(head.substr(0, c1)));
      out->pid = pid;
      out->tid = tid;
      return;
    }
  }
  out->host = std::string(head);
}

}  // namespace

std::optional<NcclLogLine> SplitNcclLogLine(std::string_view text) {
  text = Trim(text);
  NcclLogLine line;
  // Bare version banner printed by rank 0 before 2.27; it carries a timestamp
  // when NCCL_DEBUG_TIMESTAMP_LEVELS includes VERSION.
  if (std::string_view banner = StripBracketTimestamp(text);
      banner.substr(0, 13) == "NCCL version ") {
    line.level = "VERSION";
    line.message = std::string(banner);
    return line;
  }
  std::string level;
  size_t marker = FindMarker(text, &level);
  if (marker == std::string_view::npos) return std::nullopt;
  std::string_view head = text.substr(0, marker);
  line.level = level;
  line.message = std::string(Trim(text.substr(marker + 5 + level.size())));
  head = Trim(head);
  // "file.cc:123" between "[dev]" and "NCCL WARN"; plugin WARNs may carry a
  // timestamp there instead. Anything after the "]" is treated as location.
  size_t close = head.rfind(']');
  if (close != std::string_view::npos && close + 1 < head.size()) {
    line.source_location = std::string(Trim(head.substr(close + 1)));
    head = head.substr(0, close + 1);
  }
  if (!head.empty()) ParseHead(head, &line);
  return line;
}

}  // namespace fabtrack
