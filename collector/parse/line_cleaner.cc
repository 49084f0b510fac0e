#include "collector/parse/line_cleaner.h"

#include <algorithm>
#include <cctype>

namespace fabtrack {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

// Parses digits at s[i...], returns count of digits consumed; value in *out.
size_t ReadDigits(std::string_view s, size_t i, int* out) {
  size_t start = i;
  long long v = 0;
  while (i < s.size() && IsDigit(s[i]) && i - start < 9) {
    v = v * 10 + (s[i] - '0');
    ++i;
  }
  *out = static_cast<int>(v);
  return i - start;
}

std::string_view TrimLeft(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  return s.substr(i);
}

// "[1,0]<stdout>:" (Open MPI --tag-output)
bool StripOpenMpiTag(std::string_view* s, CleanLine* line) {
  std::string_view v = *s;
  if (v.empty() || v[0] != '[') return false;
  int job = 0, rank = 0;
  size_t i = 1;
  size_t n = ReadDigits(v, i, &job);
  if (n == 0) return false;
  i += n;
  if (i >= v.size() || v[i] != ',') return false;
  ++i;
  n = ReadDigits(v, i, &rank);
  if (n == 0) return false;
  i += n;
  if (i >= v.size() || v[i] != ']') return false;
  ++i;
  std::string_view rest = v.substr(i);
  for (std::string_view tag : {"<stdout>:", "<stderr>:", "<stddiag>:"}) {
    if (rest.substr(0, tag.size()) == tag) {
      line->stream.assign(tag.substr(1, tag.size() - 3));
      line->launcher_rank = rank;
      *s = rest.substr(tag.size());
      return true;
    }
  }
  return false;
}

// "[155] " or "[0]" (MPICH/Intel MPI -prepend-rank, srun-like labels).
// Not stripped when followed by "NCCL " (that is the CUDA device field of a
// host-less NCCL log line) or when the remainder looks like a table row
// continuation we cannot tell apart (a plain number list is fine to strip).
bool StripBracketRank(std::string_view* s, CleanLine* line) {
  std::string_view v = *s;
  if (v.size() < 3 || v[0] != '[') return false;
  int rank = 0;
  size_t n = ReadDigits(v, 1, &rank);
  if (n == 0 || 1 + n >= v.size() || v[1 + n] != ']') return false;
  std::string_view rest = v.substr(2 + n);
  std::string_view after_space = TrimLeft(rest);
  if (after_space.substr(0, 5) == "NCCL ") return false;
  line->launcher_rank = rank;
  *s = rest;
  return true;
}

// "0: " (srun --label). Only digits then ": " at the very start.
bool StripSrunLabel(std::string_view* s, CleanLine* line) {
  std::string_view v = *s;
  int rank = 0;
  size_t n = ReadDigits(v, 0, &rank);
  if (n == 0 || n + 1 >= v.size() || v[n] != ':' || v[n + 1] != ' ') return false;
  line->launcher_rank = rank;
  *s = v.substr(n + 2);
  return true;
}

}  // namespace

void CleanOneLineInto(std::string_view raw, int number, CleanLine* out) {
  CleanLine& line = *out;
  line.number = number;
  line.stream.clear();
  line.launcher_rank = -1;
  line.unterminated = false;
  std::string_view s = raw;
  while (!s.empty() &&
         (s.back() == '\r' || s.back() == '\n' || s.back() == ' ' || s.back() == '\t')) {
    s.remove_suffix(1);
  }
  // Prefixes can stack ("  [1,0]<stdout>:[0] ..."), so strip until none is
  // left. Each prefix starts with its own character ('[' or a digit): a line
  // starting otherwise, most lines, is tried against none of them.
  for (int guard = 0; guard < 8; ++guard) {
    s = TrimLeft(s);
    if (s.empty()) break;
    if (s[0] == '[') {
      if (StripOpenMpiTag(&s, &line)) continue;
      if (StripBracketRank(&s, &line)) continue;
    } else if (IsDigit(s[0])) {
      if (StripSrunLabel(&s, &line)) continue;
    }
    break;
  }
  line.text.assign(TrimLeft(s));
}

CleanLine CleanOneLine(std::string_view raw, int number) {
  CleanLine line;
  CleanOneLineInto(raw, number, &line);
  return line;
}

std::vector<CleanLine> SplitAndClean(std::string_view text) {
  std::vector<CleanLine> lines;
  size_t start = 0;
  int number = 1;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    lines.push_back(CleanOneLine(text.substr(start, end - start), number++));
    lines.back().unterminated = end == text.size();
    start = end + 1;
  }
  return lines;
}

std::optional<std::string> UnquoteReply(std::string_view text) {
  auto quoted = [](std::string_view line) {
    line = TrimLeft(line);
    return !line.empty() && line.front() == '>';
  };
  auto blank = [](std::string_view line) {
    line = TrimLeft(line);
    return line.empty() || line == "\r";
  };
  bool any = false;
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    if (!blank(line)) {
      if (!quoted(line)) return std::nullopt;
      any = true;
    }
    at = end + 1;
  }
  if (!any) return std::nullopt;
  // Every level a line has: a reply to a reply quotes the first post twice
  // ("> > GPU0 ...") beside its own once-quoted words.
  std::string out;
  out.reserve(text.size());
  for (size_t at = 0; at <= text.size();) {
    size_t end = std::min(text.find('\n', at), text.size());
    std::string_view line = text.substr(at, end - at);
    while (quoted(line)) {
      line = TrimLeft(line);
      line.remove_prefix(1);
      if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
    }
    out.append(line);
    if (end == text.size()) break;
    out.push_back('\n');
    at = end + 1;
  }
  return out;
}

std::string_view WithoutByteOrderMark(std::string_view text) {
  if (text.starts_with("\xEF\xBB\xBF")) text.remove_prefix(3);
  return text;
}

}  // namespace fabtrack
