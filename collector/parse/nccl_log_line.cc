#include "collector/parse/nccl_log_line.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cstring>
#include <vector>

namespace fabtrack {
namespace {

constexpr std::string_view kLevels[] = {"INFO", "WARN", "TRACE", "ERROR", "ABORT"};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAlpha(char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool AllOf(std::string_view s, bool (*pred)(char)) { return std::all_of(s.begin(), s.end(), pred); }

std::optional<int64_t> ToInt(std::string_view s) {
  int64_t v = 0;
  if (s.empty()) return std::nullopt;
  // Every line's pid and tid: a few digits, summed without from_chars (18
  // digits cannot overflow).
  if (s.size() <= 18 &&
      std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    for (char c : s) v = v * 10 + (c - '0');
    return v;
  }
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Host names as NCCL prints them (gethostname up to the first '.', though
// some sites keep the domain), plus the "<redacted>"/"***" that people put in
// their place when they share a log.
// A table: every character of every line's host passes here.
constexpr std::array<bool, 256> kHostChars = [] {
  std::array<bool, 256> t{};
  for (int c = 0; c < 256; ++c) {
    t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-' || c == '<' || c == '>' || c == '*';
  }
  return t;
}();
bool IsHostChar(char c) { return kHostChars[static_cast<unsigned char>(c)]; }

bool IsTimeChar(char c) {
  return IsDigit(c) || c == '-' || c == ':' || c == '.' || c == ',' || c == '+' || c == '/' ||
         c == 'T' || c == 'Z';
}

// Splits the text before the level marker into blank-separated tokens; a
// bracket group is one token even when it holds blanks ("[2025-10-03
// 14:22:07]", NCCL_DEBUG_TIMESTAMP_FORMAT's default).
// Fills a vector reused across calls: every line of a log passes here.
const std::vector<std::string_view>& HeadTokens(std::string_view head) {
  static thread_local std::vector<std::string_view> tokens;
  tokens.clear();
  size_t i = 0;
  while (i < head.size()) {
    while (i < head.size() && IsBlank(head[i])) ++i;
    size_t start = i;
    while (i < head.size() && !IsBlank(head[i])) {
      if (head[i] == '[') {
        size_t close = head.find(']', i);
        i = close == std::string_view::npos ? head.size() : close + 1;
      } else {
        ++i;
      }
    }
    if (i > start) tokens.push_back(head.substr(start, i - start));
  }
  return tokens;
}

// "[3]" (NCCL prints the CUDA device, -1 before one is set).
std::optional<int> DevToken(std::string_view token) {
  if (token.size() < 3 || token.front() != '[' || token.back() != ']') return std::nullopt;
  std::string_view inside = token.substr(1, token.size() - 2);
  if (inside.front() == '-') inside.remove_prefix(1);
  if (inside.empty() || !AllOf(inside, IsDigit)) return std::nullopt;
  std::optional<int64_t> v = ToInt(token.substr(1, token.size() - 2));
  if (!v || *v > 1 << 20 || *v < -1) return std::nullopt;
  return static_cast<int>(*v);
}

// What a bracket holds when a launcher or logger put it there: a rank list
// ("1,0", "3"), a timestamp, or a named rank ("rank0", "default3" of torchrun).
bool IsDecorationBracket(std::string_view inside) {
  if (inside.empty()) return false;
  if (AllOf(inside, [](char c) { return IsTimeChar(c) || c == ' '; })) return true;
  size_t letters = 0;
  while (letters < inside.size() && IsAlpha(inside[letters])) ++letters;
  return letters > 0 && letters < inside.size() && AllOf(inside.substr(letters), IsDigit);
}

// Strips glued launcher tags from the front of a token: "[1,0]<stdout>:",
// "[default0]:", "[rank3]:". Returns false when a bracket is not one.
bool StripGluedTags(std::string_view* token) {
  while (!token->empty() && token->front() == '[') {
    size_t close = token->find(']');
    if (close == std::string_view::npos || !IsDecorationBracket(token->substr(1, close - 1))) {
      return false;
    }
    std::string_view rest = token->substr(close + 1);
    if (!rest.empty() && rest.front() == '<') {
      size_t end = rest.find('>');
      if (end == std::string_view::npos) return false;
      rest = rest.substr(end + 1);
    }
    if (rest.empty() || rest.front() != ':') return false;
    *token = rest.substr(1);
  }
  return true;
}

// A token launchers and loggers put before NCCL's own prefix.
bool IsDecoration(std::string_view token) {
  if (token.front() == '[') {
    std::string_view rest = token;
    if (!StripGluedTags(&rest)) {
      // A bare "[3]" or "[2025-01-02 10:11:12]" without a trailing colon.
      return token.back() == ']' && IsDecorationBracket(token.substr(1, token.size() - 2));
    }
    return rest.empty();
  }
  // A markdown quote ("> host:1:2 [0] NCCL INFO ..." pasted in an issue), or
  // a log console's cell bar ("  | 2025-05-16T16:39:51.208-07:00 | host:1:2
  // [0] NCCL INFO ...", a copy from CloudWatch's table).
  if (AllOf(token, [](char c) { return c == '>'; })) return true;
  if (AllOf(token, [](char c) { return c == '|'; })) return true;
  // srun --label "0:", pdsh "node-1:".
  if (token.size() > 1 && token.back() == ':') {
    return AllOf(token.substr(0, token.size() - 1), IsHostChar);
  }
  // "2025-01-02T10:11:12.123Z", "10:11:12,345".
  return AllOf(token, IsTimeChar) && std::any_of(token.begin(), token.end(), IsDigit);
}

// "init.cc:1798", "misc/ibvwrap.cc:187", "nccl_net_ofi_rdma.cpp:5512".
bool IsSourceLocation(std::string_view token) {
  size_t colon = token.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == token.size()) return false;
  if (!AllOf(token.substr(colon + 1), IsDigit)) return false;
  std::string_view file = token.substr(0, colon);
  return std::any_of(file.begin(), file.end(), IsAlpha) && AllOf(file, [](char c) {
           return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '/' ||
                  c == '-' || c == '+';
         });
}

// TRACE lines print seconds since init before the location: "12.5".
bool IsElapsed(std::string_view token) {
  return !token.empty() && IsDigit(token.front()) &&
         AllOf(token, [](char c) { return IsDigit(c) || c == '.'; });
}

// The length of an RFC 3339 time with its zone at the start of `s`
// ("2025-05-16T16:39:51.208-07:00", "2024-12-04T05:27:48.129Z"), else 0.
// The zone is required: it is what ends the time when a host follows
// without a blank.
size_t ZonedTimePrefix(std::string_view s) {
  constexpr std::string_view kShape = "dddd-dd-ddTdd:dd:dd";
  if (s.size() < kShape.size() + 1) return 0;
  for (size_t i = 0; i < kShape.size(); ++i) {
    if (kShape[i] == 'd' ? !IsDigit(s[i]) : s[i] != kShape[i]) return 0;
  }
  size_t i = kShape.size();
  if (s[i] == '.') {
    size_t digits = ++i;
    while (i < s.size() && IsDigit(s[i])) ++i;
    if (i == digits) return 0;
  }
  if (i < s.size() && s[i] == 'Z') return i + 1;
  constexpr std::string_view kZone = "+dd:dd";
  if (s.size() - i < kZone.size() || (s[i] != '+' && s[i] != '-')) return 0;
  for (size_t k = 1; k < kZone.size(); ++k) {
    if (kZone[k] == 'd' ? !IsDigit(s[i + k]) : s[i + k] != kZone[k]) return 0;
  }
  return i + kZone.size();
}

// "host:pid:tid", possibly glued to launcher tags; the host may be empty. A
// log console's copy of an expanded event glues the event's time to it
// ("2025-05-16T16:39:51.208-07:00gpu-01:80:2500", CloudWatch): the time is
// a decoration, the host what follows it.
bool ParseHostPidTid(std::string_view token, NcclLogLineView* out) {
  if (!StripGluedTags(&token)) return false;
  const size_t time = ZonedTimePrefix(token);
  if (time > 0 && time < token.size() && IsHostChar(token[time])) token.remove_prefix(time);
  size_t c2 = token.rfind(':');
  if (c2 == std::string_view::npos || c2 == 0) return false;
  size_t c1 = token.rfind(':', c2 - 1);
  if (c1 == std::string_view::npos) return false;
  std::string_view host = token.substr(0, c1);
  std::string_view pid = token.substr(c1 + 1, c2 - c1 - 1);
  std::string_view tid = token.substr(c2 + 1);
  if (pid.empty() || tid.empty() || !AllOf(pid, IsDigit) || !AllOf(tid, IsDigit) ||
      !AllOf(host, IsHostChar)) {
    return false;
  }
  out->host = host;
  out->pid = ToInt(pid);
  out->tid = ToInt(tid);
  return out->pid && out->tid;
}

// Reads NCCL's prefix from the tokens before the level; false when some token
// is neither NCCL's nor a known decoration.
bool ParseHead(const std::vector<std::string_view>& tokens, NcclLogLineView* out) {
  size_t i = tokens.size();
  bool has_location = false;
  if (i > 0 && IsSourceLocation(tokens[i - 1])) {
    out->source_location = tokens[i - 1];
    has_location = true;
    --i;
    if (i > 1 && IsElapsed(tokens[i - 1]) && DevToken(tokens[i - 2])) --i;
  }
  if (i > 0) {
    if (std::optional<int> dev = DevToken(tokens[i - 1])) {
      out->cuda_device = dev;
      --i;
      if (i > 0 && ParseHostPidTid(tokens[i - 1], out)) --i;
    } else if (!has_location && i > 0 && ParseHostPidTid(tokens[i - 1], out)) {
      // NCCL always prints "[dev]" after host:pid:tid; without it the token
      // is something else ("10:00:01" of a logger's clock).
      return false;
    }
  }
  for (size_t j = 0; j < i; ++j) {
    if (!IsDecoration(tokens[j])) return false;
  }
  return true;
}

// Finds "NCCL <LEVEL>" at the start or after a blank, followed by a blank or
// the end; returns the position of "NCCL".
size_t FindMarker(std::string_view text, std::string_view* level) {
  size_t from = 0;
  while (true) {
    size_t pos = text.find("NCCL ", from);
    if (pos == std::string_view::npos) return pos;
    if (pos == 0 || IsBlank(text[pos - 1])) {
      std::string_view rest = text.substr(pos + 5);
      for (std::string_view lv : kLevels) {
        if (rest.substr(0, lv.size()) == lv &&
            (rest.size() == lv.size() || IsBlank(rest[lv.size()]))) {
          *level = lv;
          return pos;
        }
      }
    }
    from = pos + 1;
  }
}

}  // namespace

namespace {

// The line exactly as NCCL prints it, with nothing around its prefix:
// "host:pid:tid [dev] NCCL LEVEL message", the host non-empty, pid and tid of
// at most 18 digits, dev of at most 6. Nearly every line of a log has this
// shape, and for it the general reading below (tokens, decorations, source
// locations) comes to the same fields: such a head holds no "NCCL " and no
// banner, so its marker is the first. Returns false for anything else, which
// the general reading then decides.
bool SplitPlainLine(std::string_view text, NcclLogLineView* out) {
  const char* const begin = text.data();
  const char* const end = begin + text.size();
  const char* p = begin;
  while (p != end && IsHostChar(*p)) ++p;
  if (p == begin || p == end || *p != ':') return false;
  const std::string_view host(begin, static_cast<size_t>(p - begin));
  // Digits after the separator at p, up to `max` of them, then `close`; the
  // value is summed on the way (18 digits cannot overflow).
  auto number = [&](size_t max, char close, int64_t* value) {
    const char* start = ++p;
    uint64_t v = 0;
    while (p != end && IsDigit(*p)) v = v * 10 + static_cast<uint64_t>(*p++ - '0');
    const size_t count = static_cast<size_t>(p - start);
    *value = static_cast<int64_t>(v);
    return count > 0 && count <= max && p != end && *p == close;
  };
  int64_t pid = 0, tid = 0, dev = 0;
  if (!number(18, ':', &pid) || !number(18, ' ', &tid)) return false;
  if (end - p < 2 || p[1] != '[') return false;
  ++p;  // at '['
  if (!number(6, ']', &dev)) return false;
  // "] NCCL " and a level.
  if (end - p < 7 || std::memcmp(p + 1, " NCCL ", 6) != 0) return false;
  const std::string_view rest(p + 7, static_cast<size_t>(end - (p + 7)));
  for (std::string_view lv : kLevels) {
    if (rest.substr(0, lv.size()) == lv && (rest.size() == lv.size() || IsBlank(rest[lv.size()]))) {
      NcclLogLineView line;
      line.host = host;
      line.pid = pid;
      line.tid = tid;
      line.cuda_device = static_cast<int>(dev);
      line.level = lv;
      line.message = Trim(rest.substr(lv.size()));
      *out = line;
      return true;
    }
  }
  return false;
}

}  // namespace

bool SplitNcclLogLineView(std::string_view text, NcclLogLineView* out) {
  // Both forms below need "NCCL ": one memchr rejects a table row, the
  // lines most long outputs are made of.
  if (text.find('N') == std::string_view::npos) return false;
  text = Trim(text);
  if (SplitPlainLine(text, out)) return true;
  NcclLogLineView line;
  std::string_view level;
  size_t marker = FindMarker(text, &level);
  // Bare version banner printed by rank 0 before 2.27; it carries a timestamp
  // when NCCL_DEBUG_TIMESTAMP_LEVELS includes VERSION. Only a banner that
  // starts before the marker counts, so only that part is searched.
  constexpr std::string_view kBanner = "NCCL version ";
  size_t banner =
      text.substr(0, marker == std::string_view::npos ? text.size() : marker + kBanner.size() - 1)
          .find(kBanner);
  if (banner != std::string_view::npos && banner < marker &&
      (banner == 0 || IsBlank(text[banner - 1]))) {
    const std::vector<std::string_view>& head = HeadTokens(text.substr(0, banner));
    if (!std::all_of(head.begin(), head.end(), IsDecoration)) return false;
    line.level = "VERSION";
    line.message = text.substr(banner);
    *out = line;
    return true;
  }
  if (marker == std::string_view::npos) return false;
  if (!ParseHead(HeadTokens(text.substr(0, marker)), &line)) return false;
  line.level = level;
  line.message = Trim(text.substr(marker + 5 + level.size()));
  *out = line;
  return true;
}

NcclLogLine NcclLogLineView::ToLine() const {
  return NcclLogLine{
      std::string(host),   pid, tid, cuda_device, std::string(level), std::string(source_location),
      std::string(message)};
}

NcclLogLineView NcclLogLineView::Of(const NcclLogLine& line) {
  return NcclLogLineView{line.host,        line.pid,   line.tid,
                         line.cuda_device, line.level, line.source_location,
                         line.message};
}

std::optional<NcclLogLine> SplitNcclLogLine(std::string_view text) {
  NcclLogLineView view;
  if (!SplitNcclLogLineView(text, &view)) return std::nullopt;
  return view.ToLine();
}

}  // namespace fabtrack
