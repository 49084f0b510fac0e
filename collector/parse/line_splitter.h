// Splits a byte stream that arrives in chunks of any size into lines, with a
// bounded carry buffer, so a parse never holds a whole file. Pure: the caller
// reads (file, pipe, string) and feeds; this only cuts.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace fabtrack {

struct RawLine {
  std::string_view text;  // without the '\n' and without one '\r' before it
  int number = 0;         // 1-based
  // The input ended without a newline after this line (a killed writer or an
  // excerpt): its last word may be cut.
  bool unterminated = false;
  // The line was longer than the splitter's limit; `text` holds its first
  // `max_line` bytes only. No format fabtrack reads has lines near the limit,
  // so such a line is binary junk or two streams run together.
  bool truncated = false;
};

class LineSplitter {
 public:
  static constexpr size_t kDefaultMaxLine = 64 * 1024;

  explicit LineSplitter(size_t max_line = kDefaultMaxLine) : max_line_(max_line) {}

  // Calls on_line(const RawLine&) for every line completed by `chunk`. The
  // view in a RawLine is valid only during the call.
  template <typename F>
  void Feed(std::string_view chunk, F&& on_line) {
    while (!chunk.empty()) {
      const char* nl = static_cast<const char*>(std::memchr(chunk.data(), '\n', chunk.size()));
      if (nl == nullptr) {
        Carry(chunk);
        return;
      }
      size_t len = static_cast<size_t>(nl - chunk.data());
      if (carry_.empty() && !carry_truncated_) {
        // The common case: the whole line is inside this chunk; no copy.
        Emit(chunk.substr(0, len), false, false, on_line);
      } else {
        Carry(chunk.substr(0, len));
        Emit(carry_, carry_truncated_, false, on_line);
        carry_.clear();
        carry_truncated_ = false;
      }
      chunk.remove_prefix(len + 1);
    }
  }

  // End of input: emits a last line that had no newline.
  template <typename F>
  void Finish(F&& on_line) {
    if (!carry_.empty() || carry_truncated_) {
      Emit(carry_, carry_truncated_, true, on_line);
      carry_.clear();
      carry_truncated_ = false;
    }
  }

  // Lines emitted so far.
  int lines() const { return number_; }

 private:
  void Carry(std::string_view part) {
    size_t room = max_line_ - std::min(max_line_, carry_.size());
    if (part.size() > room) {
      carry_truncated_ = true;
      part = part.substr(0, room);
    }
    carry_.append(part);
  }

  template <typename F>
  void Emit(std::string_view text, bool truncated, bool unterminated, F&& on_line) {
    if (text.size() > max_line_) {
      text = text.substr(0, max_line_);
      truncated = true;
    }
    // CRLF: the '\r' belongs to the line ending. A '\r' kept by truncation is
    // left alone: the ending was not seen.
    if (!truncated && !unterminated && !text.empty() && text.back() == '\r') {
      text.remove_suffix(1);
    }
    RawLine line;
    line.text = text;
    line.number = ++number_;
    line.unterminated = unterminated;
    line.truncated = truncated;
    on_line(line);
  }

  size_t max_line_;
  std::string carry_;
  bool carry_truncated_ = false;
  int number_ = 0;
};

}  // namespace fabtrack
