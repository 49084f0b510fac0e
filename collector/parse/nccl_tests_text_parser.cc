#include "collector/parse/nccl_tests_text_parser.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <deque>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/parse/nccl_log_line.h"
#include "core/bus_bandwidth.h"
#include "core/decimal_text.h"

namespace fabtrack {
namespace {

// ---------------------------------------------------------------------------
// Small text helpers.

// A table lookup: the row tokenizer asks this of every character.
constexpr std::array<bool, 256> kSpaceTable = [] {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\r', '\n'}) t[c] = true;
  return t;
}();
bool IsSpace(char c) { return kSpaceTable[static_cast<unsigned char>(c)]; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

std::string_view Trim(std::string_view s) {
  while (!s.empty() && IsSpace(s.front())) s.remove_prefix(1);
  while (!s.empty() && IsSpace(s.back())) s.remove_suffix(1);
  return s;
}

#if defined(__SSE2__)
// Bit i set when byte i of the 16 at `p` is a blank (IsSpace).
uint32_t BlankMask16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i blank = _mm_or_si128(
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t'))),
      _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8('\r')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\n'))));
  return static_cast<uint32_t>(_mm_movemask_epi8(blank));
}
#endif

// A row is mostly the blanks nccl-tests pads its columns with: 16 bytes are
// classified at once and tokens found from the mask's edges (a byte at a
// time this was an eighth of a table's parse). With kMaxTokens, stops after
// that many: a caller that looks at no more of them need not read the rest.
template <size_t kMaxTokens = SIZE_MAX>
void TokensInto(std::string_view s, std::vector<std::string_view>* tokens) {
  std::vector<std::string_view>& out = *tokens;
  out.clear();
  const char* const data = s.data();
  const size_t size = s.size();
#if defined(__SSE2__)
  size_t start = 0;  // of the token being read, when in_token
  bool in_token = false;
  for (size_t block = 0; block < size; block += 16) {
    uint32_t blank;
    if (size - block >= 16) {
      blank = BlankMask16(data + block);
    } else {
      // The tail, padded with blanks (never read past the end).
      char tail[16];
      std::memset(tail, ' ', sizeof tail);
      std::memcpy(tail, data + block, size - block);
      blank = BlankMask16(tail);
    }
    const uint32_t word = ~blank & 0xFFFFu;  // bytes of tokens
    uint32_t from = 0;                       // bits below are handled
    while (from < 16) {
      const uint32_t above = 0xFFFFu << from;
      if (!in_token) {
        const uint32_t starts = word & above;
        if (starts == 0) break;
        from = static_cast<uint32_t>(__builtin_ctz(starts));
        start = block + from;
        in_token = true;
      } else {
        const uint32_t ends = blank & above;
        if (ends == 0) break;
        from = static_cast<uint32_t>(__builtin_ctz(ends));
        out.emplace_back(data + start, block + from - start);
        if constexpr (kMaxTokens != SIZE_MAX) {
          if (out.size() == kMaxTokens) return;
        }
        in_token = false;
      }
    }
  }
  if (in_token) out.emplace_back(data + start, size - start);
#else
  const char* p = data;
  const char* const end = p + size;
  while (true) {
    while (p != end && IsSpace(*p)) ++p;
    if (p == end) return;
    const char* start = p;
    while (p != end && !IsSpace(*p)) ++p;
    out.emplace_back(start, static_cast<size_t>(p - start));
    if constexpr (kMaxTokens != SIZE_MAX) {
      if (out.size() == kMaxTokens) return;
    }
  }
#endif
}

std::vector<std::string_view> Tokens(std::string_view s) {
  std::vector<std::string_view> out;
  TokensInto(s, &out);
  return out;
}

// The text after any leading '#' and blanks. Renderers sometimes strip the
// '#' (markdown turns "# x" into a heading), so classification never relies on
// it being present.
std::string_view Body(std::string_view text) {
  size_t i = 0;
  while (i < text.size() && (text[i] == '#' || IsSpace(text[i]))) ++i;
  return text.substr(i);
}

// Inlined: the table parser asks it of most lines with a literal prefix,
// and inline the compare is a few instructions, not a call into memcmp.
[[gnu::always_inline]] inline bool StartsWith(std::string_view s, std::string_view prefix) {
  if (prefix.empty()) return true;
  return s.size() >= prefix.size() && s[0] == prefix[0] &&
         std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// Strict number: the whole token, an optional leading '+', in range.
template <typename T>
std::optional<T> ToNumber(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  T v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int64_t> ToInt64(std::string_view s) {
  // Up to 18 digits cannot overflow: the sizes and counts of every row are
  // read here without from_chars; longer numbers and the rest go to it.
  std::string_view digits = s;
  if (!digits.empty() && digits.front() == '+') digits.remove_prefix(1);
  const bool negative = !digits.empty() && digits.front() == '-';
  if (negative) digits.remove_prefix(1);
  if (digits.empty() || digits.size() > 18) return ToNumber<int64_t>(s);
  int64_t v = 0;
  for (char c : digits) {
    const unsigned d = static_cast<unsigned char>(c) - static_cast<unsigned>('0');
    if (d > 9) return std::nullopt;
    v = v * 10 + static_cast<int64_t>(d);
  }
  return negative ? -v : v;
}

std::optional<int> ToInt(std::string_view s) {
  auto v = ToInt64(s);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

// Strict double: the whole token must be a number in range. "nan"/"inf" parse
// (nccl-tests prints them for zero-time rows) and are reported separately.
std::optional<double> ToDouble(std::string_view s) {
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  return ParseDecimal(s);
}

// "Init COMPLETE" anywhere in the line: a search for its rare 'M', then a
// compare (memmem sets up a table on every call).
bool ContainsInitComplete(std::string_view s) {
  constexpr std::string_view kNeedle = "Init COMPLETE";
  constexpr size_t kAnchor = 7;  // the 'M'
  for (size_t at = s.find('M', kAnchor);
       at != std::string_view::npos && at - kAnchor + kNeedle.size() <= s.size();
       at = s.find('M', at + 1)) {
    if (s.compare(at - kAnchor, kNeedle.size(), kNeedle) == 0) return true;
  }
  return false;
}

bool AllDigits(std::string_view s) {
  for (char c : s) {
    if (!IsDigit(c)) return false;
  }
  return true;
}

bool IsNotAvailable(std::string_view s) { return s == "N/A" || s == "n/a" || s == "-"; }

// ---------------------------------------------------------------------------
// Column layout.

enum class Col {
  kSize,
  kCount,
  kType,
  kRedop,
  kRoot,
  kTime,
  kAlgbw,
  kBusbw,
  kWrong,
  kError,
  kIterMin,
  kIterMax,
  kIterP50,
  kIterP99,
  kIterCv,
  kTimestamp,
  kUnknown,
};

struct Column {
  Col kind = Col::kUnknown;
  int half = -1;  // 0 out-of-place, 1 in-place, -1 neither
  std::string name;
  bool operator==(const Column&) const = default;
};

struct Layout {
  std::vector<Column> columns;
  // How many of them are timestamps (two tokens each in a row), counted once
  // here rather than in every row.
  size_t timestamps = 0;
  // The 2017 format ("bytes N type op time ...") printed time in ms.
  double time_scale = 1.0;
  bool operator==(const Layout&) const = default;
};

std::optional<Col> ColumnKind(std::string_view name) {
  static const auto* kinds = new std::map<std::string_view, Col>{
      {"size", Col::kSize},
      {"bytes", Col::kSize},
      {"count", Col::kCount},
      {"N", Col::kCount},
      {"type", Col::kType},
      {"redop", Col::kRedop},
      {"op", Col::kRedop},
      {"root", Col::kRoot},
      {"time", Col::kTime},
      {"cputime", Col::kTime},
      {"algbw", Col::kAlgbw},
      {"busbw", Col::kBusbw},
      {"#wrong", Col::kWrong},
      {"wrong", Col::kWrong},
      {"error", Col::kError},
      {"res", Col::kError},
      {"i_min", Col::kIterMin},
      {"i_max", Col::kIterMax},
      {"i_p50", Col::kIterP50},
      {"i_p99", Col::kIterP99},
      {"i_cv%", Col::kIterCv},
      {"timestamp", Col::kTimestamp},
      // fabtrack-allreduce's trailing per-iteration columns (out-of-place).
      {"p50", Col::kIterP50},
      {"p99", Col::kIterP99},
      {"cv%", Col::kIterCv},
  };
  auto it = kinds->find(name);
  if (it == kinds->end()) return std::nullopt;
  return it->second;
}

// "size count type redop root time algbw busbw #wrong time ..." (body of the
// column header line). Returns nullopt when the line is not a column header.
std::optional<Layout> ParseColumnHeader(std::string_view body, std::vector<std::string>* unknown) {
  // Most lines are rows: reject them before tokenizing.
  if (!StartsWith(body, "size") && !StartsWith(body, "bytes")) return std::nullopt;
  std::vector<std::string_view> toks = Tokens(body);
  if (toks.size() < 3 || (toks[0] != "size" && toks[0] != "bytes")) return std::nullopt;
  bool has_time = false;
  for (auto t : toks) has_time |= (t == "time" || t == "cputime");
  if (!has_time) return std::nullopt;
  Layout layout;
  if (toks[0] == "bytes") layout.time_scale = 1000.0;
  int times = 0;
  for (auto t : toks) {
    Column c;
    c.name = std::string(t);
    auto kind = ColumnKind(t);
    c.kind = kind.value_or(Col::kUnknown);
    if (!kind) unknown->push_back(c.name);
    if (c.kind == Col::kTime) ++times;
    if (c.kind == Col::kTimestamp) ++layout.timestamps;
    bool per_half = c.kind != Col::kSize && c.kind != Col::kCount && c.kind != Col::kType &&
                    c.kind != Col::kRedop && c.kind != Col::kRoot && c.kind != Col::kTimestamp;
    c.half = per_half && times > 0 ? (times > 1 ? 1 : 0) : -1;
    // fabtrack-allreduce prints one set of latency columns after both halves;
    // they describe the out-of-place calls.
    if (t == "p50" || t == "p99" || t == "cv%") c.half = 0;
    layout.columns.push_back(std::move(c));
  }
  return layout;
}

// ---------------------------------------------------------------------------
// Header lines.

// "nThread 1 nGpus 8 minBytes 8 maxBytes 134217728 step: 2(factor) warmup
// iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0"
TestParameters ParseParameters(std::string_view body) {
  // The numbers that follow their key directly.
  static constexpr std::pair<std::string_view, std::optional<int> TestParameters::*> kInts[] = {
      {"nThread", &TestParameters::threads},        {"nGpus", &TestParameters::gpus_per_thread},
      {"validation:", &TestParameters::validation}, {"graph:", &TestParameters::graph},
      {"unalign:", &TestParameters::unalign},
  };
  static constexpr std::pair<std::string_view, std::optional<int64_t> TestParameters::*> kInt64s[] =
      {{"minBytes", &TestParameters::min_bytes}, {"maxBytes", &TestParameters::max_bytes}};
  TestParameters p;
  std::vector<std::string_view> t = Tokens(body);
  auto next = [&](size_t i) -> std::string_view { return i + 1 < t.size() ? t[i + 1] : ""; };
  for (size_t i = 0; i < t.size(); ++i) {
    std::string_view k = t[i];
    for (const auto& [key, field] : kInts) {
      if (k == key) p.*field = ToInt(next(i));
    }
    for (const auto& [key, field] : kInt64s) {
      if (k == key) p.*field = ToInt64(next(i));
    }
    if (k == "step:") {
      // "1048576(bytes)" or "2(factor)"
      std::string_view v = next(i);
      size_t paren = v.find('(');
      auto n = ToInt64(v.substr(0, paren));
      if (n && paren != std::string_view::npos) {
        if (v.substr(paren) == "(factor)") p.step_factor = n;
        if (v.substr(paren) == "(bytes)") p.step_bytes = n;
      }
    } else if (k == "iters:") {
      std::string_view prev = i > 0 ? t[i - 1] : "";
      p.*(prev == "warmup" ? &TestParameters::warmup_iters
          : prev == "agg"  ? &TestParameters::agg_iters
                           : &TestParameters::iters) = ToInt(next(i));
    }
  }
  return p;
}

bool SameParameters(const TestParameters& a, const TestParameters& b) {
  return a.threads == b.threads && a.gpus_per_thread == b.gpus_per_thread &&
         a.min_bytes == b.min_bytes && a.max_bytes == b.max_bytes && a.step_bytes == b.step_bytes &&
         a.step_factor == b.step_factor && a.warmup_iters == b.warmup_iters && a.iters == b.iters &&
         a.agg_iters == b.agg_iters && a.validation == b.validation && a.graph == b.graph &&
         a.unalign == b.unalign;
}

// "Rank  0 Group  0 Pid     43 on host device  0 [0x0f] NVIDIA A100-SXM4-40GB"
// "Rank  0 Pid  87569 on    seville device  0 [0x36] Tesla V100-SXM3-32GB"
// "Rank  0 on host device  0 [0x1a] Tesla P100" (2017)
// Returns nullopt when the line is cut short or otherwise not a device line.
std::optional<RankDevice> ParseDevice(std::string_view body,
                                      std::vector<std::string_view>* scratch) {
  // "Rank N Group N Pid N on HOST device N": below, nothing reads past the
  // tenth token or asks whether there are more than ten, so the GPU model's
  // words are not split (the bus id and model are read from the text).
  TokensInto<10>(body, scratch);
  const std::vector<std::string_view>& t = *scratch;
  if (t.size() < 2 || t[0] != "Rank") return std::nullopt;
  RankDevice d;
  auto rank = ToInt(t[1]);
  if (!rank) return std::nullopt;
  d.rank = *rank;
  size_t i = 2;
  if (i + 1 < t.size() && t[i] == "Group") {
    d.group = ToInt(t[i + 1]);
    i += 2;
  }
  if (i + 1 < t.size() && t[i] == "Pid") {
    d.pid = ToInt64(t[i + 1]);
    i += 2;
  }
  if (i >= t.size() || t[i] != "on") return std::nullopt;
  ++i;
  // The host is printed with %10s and may be empty: "on            device 0".
  bool empty_host = i + 2 < t.size() && t[i] == "device" && ToInt(t[i + 1]) && t[i + 2][0] == '[';
  if (!empty_host) {
    if (i >= t.size()) return std::nullopt;
    d.host = std::string(t[i]);
    ++i;
  }
  if (i + 1 >= t.size() || t[i] != "device") return std::nullopt;
  d.device = ToInt(t[i + 1]);
  if (!d.device) return std::nullopt;
  // Bus id and model come from the raw text: the model holds spaces.
  size_t open = body.find('[', t[i + 1].data() - body.data());
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = body.find(']', open);
  if (close == std::string_view::npos) return std::nullopt;
  d.bus_id = std::string(body.substr(open + 1, close - open - 1));
  d.gpu_model = std::string(Trim(body.substr(close + 1)));
  return d;
}

// A command line such as "mpirun ... ./build/all_gather_perf -b 8" names the
// collective for formats that do not print it.
std::optional<std::string> CollectiveFromCommand(std::string_view text) {
  // Most lines outside a table name no program: no tokens for them.
  if (text.find("_perf") == std::string_view::npos) return std::nullopt;
  for (std::string_view tok : Tokens(text)) {
    while (!tok.empty() && (tok.back() == '"' || tok.back() == '\'' || tok.back() == ',' ||
                            tok.back() == ';' || tok.back() == '`')) {
      tok.remove_suffix(1);
    }
    size_t slash = tok.rfind('/');
    if (slash != std::string_view::npos) tok = tok.substr(slash + 1);
    if (!(tok.ends_with("_perf") || tok.ends_with("_perf_mpi"))) continue;
    if (auto c = CanonicalCollective(tok)) return c;
  }
  return std::nullopt;
}

// ---------------------------------------------------------------------------
// Rows.

// Two numbers printed without a separating blank ("1234.5612.34") when a
// producer or a renderer lost the padding: split after the first decimal
// point, preferring the two decimals nccl-tests prints when they fit.
bool SplitGlued(std::string_view tok, std::string_view* a, std::string_view* b) {
  size_t dot = tok.find('.');
  if (dot == std::string_view::npos || tok.find('.', dot + 1) == std::string_view::npos) {
    return false;
  }
  for (size_t decimals : {2u, 1u}) {
    size_t cut = dot + 1 + decimals;
    if (cut >= tok.size()) continue;
    std::string_view x = tok.substr(0, cut), y = tok.substr(cut);
    if (ToDouble(x) && ToDouble(y)) {
      *a = x;
      *b = y;
      return true;
    }
  }
  return false;
}

Measurement* Half(SizeRow* row, int half) {
  std::optional<Measurement>& m = half == 0 ? row->oop : row->ip;
  if (!m) m.emplace();
  return &*m;
}

// `op_may_be_blank`: the table is hypercube's, or of a collective not named.
// Fills `row` (default-constructed: the table's own new row, so a row is not
// moved on its way in) or says why not in `error` and returns false.
bool ParseRow(const CleanLine& line, const Layout& layout, bool op_may_be_blank,
              std::vector<std::string_view>* scratch, SizeRow* out, std::string* error) {
  TokensInto(line.text, scratch);
  std::vector<std::string_view>& toks = *scratch;
  // Count the value slots the layout needs (a timestamp takes two tokens).
  const size_t needed = layout.columns.size() + layout.timestamps;
  const size_t min_needed = layout.columns.size() - layout.timestamps;
  if (toks.size() < min_needed) {
    // Retry with glued numbers split apart before giving up.
    std::vector<std::string_view> split;
    for (auto t : toks) {
      std::string_view a, b;
      if (SplitGlued(t, &a, &b)) {
        split.push_back(a);
        split.push_back(b);
      } else {
        split.push_back(t);
      }
    }
    if (split.size() == min_needed || split.size() == needed) toks = split;
  }
  // hypercube_perf prints an empty op name under "redop" (src/hypercube.cu
  // passes "" where the others pass "none"), so its rows are one value short
  // and the root's -1 stands where an op (never a number) would: no op.
  size_t blank_redop = SIZE_MAX;
  if (op_may_be_blank && (toks.size() + 1 == min_needed || toks.size() + 1 == needed)) {
    for (size_t i = 0; i + 1 < layout.columns.size(); ++i) {
      if (layout.columns[i].kind == Col::kRedop && layout.columns[i + 1].kind == Col::kRoot &&
          i < toks.size() && ToInt(toks[i])) {
        blank_redop = i;
      }
    }
    if (blank_redop != SIZE_MAX) toks.insert(toks.begin() + blank_redop, std::string_view());
  }

  SizeRow& row = *out;
  row.line = line.number;
  size_t ti = 0;
  for (const Column& c : layout.columns) {
    if (ti >= toks.size()) {
      if (c.kind == Col::kTimestamp) break;  // timestamps are optional decoration
      *error = "row ends before column '" + c.name + "' (" + std::to_string(toks.size()) + " of " +
               std::to_string(min_needed) + " values; line cut short?)";
      return false;
    }
    std::string_view v = toks[ti++];
    auto bad = [&](std::string_view what) {
      *error = "column '" + c.name + "': " + std::string(what) + " '" + std::string(v) + "'";
      return false;
    };
    // A measurement value: number, nullopt for N/A and non-finite values.
    auto measure = [&](std::optional<double>* out, double scale) -> bool {
      if (IsNotAvailable(v)) return true;
      auto d = ToDouble(v);
      if (!d) return false;
      if (std::isfinite(*d)) *out = *d * scale;
      return true;
    };
    switch (c.kind) {
      case Col::kSize: {
        auto n = ToInt64(v);
        if (!n || *n < 0) return bad("not a byte count");
        row.size_bytes = *n;
        break;
      }
      case Col::kCount: {
        auto n = ToInt64(v);
        if (!n || *n < 0) return bad("not an element count");
        row.count = n;
        break;
      }
      case Col::kType:
        if (IsDigit(v[0])) return bad("not a data type");
        row.type = std::string(v);
        break;
      case Col::kRedop:
        if (v.empty()) break;  // hypercube's blank op
        if (IsDigit(v[0])) return bad("not a reduction op");
        if (v != "none") row.redop = std::string(v);
        break;
      case Col::kRoot: {
        auto n = ToInt(v);
        if (!n) return bad("not a root rank");
        row.root = n;
        break;
      }
      case Col::kTime:
        if (c.half < 0 || !measure(&Half(&row, c.half)->time_us, layout.time_scale)) {
          return bad("not a time");
        }
        break;
      case Col::kAlgbw:
        if (c.half < 0 || !measure(&Half(&row, c.half)->algbw_gbps, 1.0)) {
          return bad("not a bandwidth");
        }
        break;
      case Col::kBusbw:
        if (c.half < 0 || !measure(&Half(&row, c.half)->busbw_gbps, 1.0)) {
          return bad("not a bandwidth");
        }
        break;
      case Col::kWrong: {
        if (c.half < 0) return bad("misplaced");
        Measurement* m = Half(&row, c.half);
        if (IsNotAvailable(v)) break;
        // Mostly "0": up to 15 plain digits are the count itself, as the
        // double below would give it (exact below 10^15).
        if (!v.empty() && v.size() <= 15 && AllDigits(v)) {
          m->wrong = *ToInt64(v);
          break;
        }
        // Printed with %6g, so large counts come as "1e+06".
        auto d = ToDouble(v);
        if (!d) return bad("not a count of wrong elements");
        if (!std::isfinite(*d) || *d < 0 || *d >= 9.2e18 || std::floor(*d) != *d) {
          return bad("count of wrong elements out of range");
        }
        m->wrong = static_cast<int64_t>(*d);
        break;
      }
      case Col::kError: {
        if (c.half < 0) return bad("misplaced");
        Measurement* m = Half(&row, c.half);
        if (!measure(&m->max_error, 1.0)) return bad("not an error value");
        break;
      }
      case Col::kIterMin:
      case Col::kIterMax:
      case Col::kIterP50:
      case Col::kIterP99:
      case Col::kIterCv: {
        if (c.half < 0) return bad("misplaced");
        Measurement* m = Half(&row, c.half);
        std::optional<double>* out = c.kind == Col::kIterMin   ? &m->iter_min_us
                                     : c.kind == Col::kIterMax ? &m->iter_max_us
                                     : c.kind == Col::kIterP50 ? &m->iter_p50_us
                                     : c.kind == Col::kIterP99 ? &m->iter_p99_us
                                                               : &m->iter_cv_pct;
        if (!measure(out, 1.0)) return bad("not a number");
        break;
      }
      case Col::kTimestamp:
        // "2025-01-02 10:11:12": the date and the clock are two tokens.
        if (ti < toks.size() && toks[ti].find(':') != std::string_view::npos) ++ti;
        break;
      case Col::kUnknown:
        break;
    }
  }
  if (ti < toks.size()) {
    *error = std::to_string(toks.size() - ti) + " value(s) more than the " +
             std::to_string(layout.columns.size()) + " columns of the header";
    return false;
  }
  return true;
}

// ---------------------------------------------------------------------------
// Stream state.

// Header facts seen since the last table was opened.
struct PendingHeader {
  std::optional<std::string> tests_version;
  std::optional<int> version_code;
  std::optional<std::string> collective;          // "Collective test starting: X"
  std::optional<std::string> command_collective;  // from a "..._perf" command line
  std::optional<TestParameters> params;
  std::vector<RankDevice> devices;
  int first_line = 0;
  // Set when a rank's device line came twice, from two processes (AddDevice):
  // where and which, for the error if their rows turn out to interleave.
  std::string two_processes;

  bool HasHeader() const { return params.has_value() || !devices.empty(); }
  // The header as nccl-tests prints it before NCCL's init: its parameter
  // line, or a device list from rank 0 (an excerpt that starts inside the
  // list is not one).
  bool IsWholeHeader() const {
    if (params) return true;
    for (const RankDevice& d : devices) {
      if (d.rank == 0) return true;
    }
    return false;
  }
  void Touch(int line) {
    if (first_line == 0) first_line = line;
  }
};

// The state of one launcher rank's output.
struct Stream {
  PendingHeader pending;
  std::optional<size_t> open;  // table receiving rows
  std::optional<size_t> last;  // most recent table of this stream
  Layout layout;
  // A whole row seen before this stream's first table: a table is opened
  // when the next line is another (OpenHeaderlessTable).
  std::optional<CleanLine> headerless_first;
  // Rows of this stream's last complete table: room a new table reserves, so
  // a month of the same table does not grow each one's rows step by step.
  size_t rows_hint = 0;
  // The open table's header came from two processes (PendingHeader::
  // two_processes), and whether its rows turned out to interleave: then none
  // of them is read, nor its trailers.
  std::string open_two_processes;
  bool open_refused = false;
};

// Whether two device lines of one rank come from different processes: each
// printed its own header, as every process of an nccl-tests binary built
// without MPI does when a launcher starts several (each runs the test alone,
// as rank 0 of a 1-rank job). Lines without a pid (2017) cannot tell.
bool OtherProcess(const RankDevice& a, const RankDevice& b) {
  return (a.pid && b.pid && *a.pid != *b.pid) ||
         (!a.host.empty() && !b.host.empty() && a.host != b.host);
}

// "pid 6101 on gpu-01" as a message names a device line's process.
std::string ProcessName(const RankDevice& d) {
  std::string name = d.pid ? "pid " + std::to_string(*d.pid) : "no pid";
  if (!d.host.empty()) name += " on " + d.host;
  return name;
}

// What PendingHeader::two_processes holds: the second device line's place
// and both processes.
std::string TwoProcesses(int line, const RankDevice& second, const RankDevice& first) {
  return "\"Rank " + std::to_string(second.rank) + "\" at line " + std::to_string(line) + ": " +
         ProcessName(second) + "; the first: " + ProcessName(first);
}

// Moves *d into the list unless its rank has a line already; then returns
// that line when it is another process's (*d left as it was), else null.
const RankDevice* AddDevice(std::vector<RankDevice>* devices, RankDevice* d) {
  // A header printed twice (a log pasted twice, a launcher echoing it) repeats
  // the rank numbers; keep the first line for each rank.
  for (const RankDevice& have : *devices) {
    if (have.rank == d->rank) return OtherProcess(have, *d) ? &have : nullptr;
  }
  devices->push_back(std::move(*d));
  return nullptr;
}

void RecomputeRanksAndHosts(TestTable* t) {
  t->ranks = t->devices.empty() ? std::nullopt : std::optional<int>(t->devices.size());
  t->hosts.clear();
  for (const RankDevice& d : t->devices) {
    if (d.host.empty()) continue;
    bool seen = false;
    for (const auto& h : t->hosts) seen |= h == d.host;
    if (!seen) t->hosts.push_back(d.host);
  }
}

// Moves header facts into a table, filling only what it does not have yet
// (the header is spent: a month of tables is a month of device lines).
void ApplyHeader(PendingHeader&& h, TestTable* t) {
  if (!t->nccl_tests_version) t->nccl_tests_version = std::move(h.tests_version);
  if (!t->nccl_version_code) t->nccl_version_code = h.version_code;
  if (!t->collective) {
    t->collective = h.collective ? std::move(h.collective) : std::move(h.command_collective);
  }
  if (h.params && !t->parameters.threads && !t->parameters.min_bytes) t->parameters = *h.params;
  if (t->devices.empty()) {
    t->devices = std::move(h.devices);
  } else {
    for (RankDevice& d : h.devices) (void)AddDevice(&t->devices, &d);
  }
  RecomputeRanksAndHosts(t);
}

}  // namespace

// In a unity build this file is #included into the group's translation unit,
// so GCC takes it for a header and warns that Impl (declared in the header)
// holds types of the anonymous namespace. They are this file's own and Impl is
// defined once, here: nothing can be defined twice.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wsubobject-linkage"
class NcclTestsTextParser::Impl {
 public:
  Impl(std::vector<ParseError>* errors, TableSink on_table)
      : errors_(errors), on_table_(std::move(on_table)) {}

  void Feed(const CleanLine& line, bool nccl_log_line) {
    std::string_view text = line.text;
    if (Trim(text).empty()) return;
    if (nccl_log_line) {  // interleaved NCCL_DEBUG output
      last_nccl_line_ = line.number;
      // Searched only until the first one after the latest header line: that
      // is all CloseCutOffHeader asks, and most lines of a log are NCCL's.
      if (last_init_complete_line_ < last_header_line_ && ContainsInitComplete(text)) {
        last_init_complete_line_ = line.number;
      }
      return;
    }
    Stream& st = streams_[line.launcher_rank];
    std::string_view body = Body(text);
    bool hashed = text.front() == '#';

    // Rows first: most lines of a long output are rows, and no other line
    // kind starts with a digit.
    if (!hashed && IsDigit(text.front())) {
      // Not inside a table: not ours, unless this stream has had no table
      // and the line is a whole row of today's layout (an excerpt that
      // starts inside the table, its column header left out).
      if (!st.open && (st.last || !OpenHeaderlessTable(&st, line))) return;
      st.headerless_first.reset();
      if (st.open_refused) return;
      TestTable& t = At(*st.open);
      const bool op_may_be_blank = !t.collective || *t.collective == "hypercube";
      SizeRow& row = t.rows.emplace_back();
      std::string error;
      if (!ParseRow(line, st.layout, op_may_be_blank, &scratch_, &row, &error)) {
        t.rows.pop_back();
        Error(line.number, std::move(error));
        return;
      }
      // Under a header of two processes, a size not above the last row's is
      // the other process's row: their lines interleave.
      if (!st.open_two_processes.empty() && t.rows.size() >= 2 &&
          row.size_bytes <= t.rows[t.rows.size() - 2].size_bytes) {
        RefuseInterleaved(&st, &t, line.number);
        return;
      }
      // The file ends inside this row: its last value may be cut ("12" of
      // "123.4"), as an NCCL line's would (nccl_log_parser.h).
      if (line.unterminated) {
        t.rows.pop_back();
        Error(line.number, "last line ends without a newline (cut short?); row ignored");
        return;
      }
      t.last_line = line.number;
      return;
    }
    st.headerless_first.reset();
    if (StartsWith(body, "nccl-tests version")) {
      StartHeaderBlock(&st);
      Touch(&st, line.number);
      std::vector<std::string_view> t = Tokens(body);
      if (t.size() >= 3) {
        std::string_view v = t[2];
        size_t n = 0;
        while (n < v.size() && (IsDigit(v[n]) || v[n] == '.')) ++n;
        if (n > 0) st.pending.tests_version = std::string(v.substr(0, n));
      }
      for (auto tok : t) {
        if (StartsWith(tok, "nccl-library=")) st.pending.version_code = ToInt(tok.substr(13));
      }
      return;
    }
    if (StartsWith(body, "Collective test starting:")) {
      if (st.pending.HasHeader()) StartHeaderBlock(&st);
      CloseWithRows(&st);
      Touch(&st, line.number);
      st.pending.collective = CanonicalCollective(Trim(body.substr(25)));
      return;
    }
    if (StartsWith(body, "Collective test concluded:")) {
      if (st.last) {
        TestTable& t = At(*st.last);
        if (!t.collective) t.collective = CanonicalCollective(Trim(body.substr(26)));
        t.last_line = line.number;
      }
      return;
    }
    if (StartsWith(body, "nThread ")) {
      TestParameters p = ParseParameters(body);
      // The same header again (one per process of a non-MPI build) keeps the
      // header block; different parameters start a new one.
      if (st.pending.params && !SameParameters(*st.pending.params, p)) StartHeaderBlock(&st);
      CloseWithRows(&st);
      Touch(&st, line.number);
      st.pending.params = p;
      return;
    }
    if (StartsWith(body, "Rank ")) {
      if (auto d = ParseDevice(body, &scratch_)) {
        Touch(&st, line.number);
        const RankDevice* other = AddDevice(&st.pending.devices, &*d);
        if (other && st.pending.two_processes.empty()) {
          st.pending.two_processes = TwoProcesses(line.number, *d, *other);
        }
      } else if (hashed) {
        Error(line.number, "device line cut short or malformed: '" + std::string(body) + "'");
      }
      return;
    }
    if (StartsWith(body, "Out of bounds")) {
      if (!st.open || st.open_refused)
        return;  // a repeated trailer (one per process) or a stray one
      TestTable& t = At(*st.open);
      std::vector<std::string_view> v = Tokens(body.substr(body.find(':') + 1));
      std::optional<int64_t> n = v.empty() ? std::nullopt : ToInt64(v[0]);
      if (!n || v.size() < 2 || (v[1] != "OK" && v[1] != "FAILED")) {
        Error(line.number, "'Out of bounds values' trailer cut short or malformed");
        return;
      }
      t.oob_count = n;
      t.oob_ok = v[1] == "OK";
      t.last_line = line.number;
      return;
    }
    if (StartsWith(body, "Avg bus ")) {
      if (!st.open) return;
      if (st.open_refused) {  // stays incomplete: no row of it was read
        st.open.reset();
        st.open_refused = false;
        return;
      }
      TestTable& t = At(*st.open);
      size_t colon = body.find(':');
      std::vector<std::string_view> v = colon == std::string_view::npos
                                            ? std::vector<std::string_view>{}
                                            : Tokens(body.substr(colon + 1));
      std::optional<double> bw = v.empty() ? std::nullopt : ToDouble(v[0]);
      if (!bw) {
        Error(line.number, "'Avg bus bandwidth' trailer cut short or malformed");
        return;
      }
      if (std::isfinite(*bw)) t.avg_busbw = bw;
      t.complete = true;
      st.rows_hint = std::min<size_t>(t.rows.size(), 4096);
      t.last_line = line.number;
      st.open.reset();
      return;
    }
    std::vector<std::string> unknown;
    std::optional<Layout> layout;
    if (!last_header_.empty() && body == last_header_) {
      layout = last_layout_;
      unknown = last_unknown_;
    } else if ((layout = ParseColumnHeader(body, &unknown))) {
      last_header_.assign(body);
      last_layout_ = *layout;
      last_unknown_ = unknown;
    }
    if (layout) {
      for (const auto& u : unknown) {
        Error(line.number, "unknown column '" + u + "' in the column header (skipped)");
      }
      OpenTable(&st, std::move(*layout), line.number);
      return;
    }
    if (!hashed) {
      if (auto c = CollectiveFromCommand(text)) st.pending.command_collective = c;
    }
  }

  std::vector<TestTable> Finish() {
    for (auto& [rank, st] : streams_) CloseCutOffHeader(&st);
    std::vector<TestTable> rest;
    for (TestTable& t : tables_) {
      if (on_table_) {
        on_table_(std::move(t));
      } else {
        rest.push_back(std::move(t));
      }
    }
    base_ += tables_.size();
    tables_.clear();
    return rest;
  }

 private:
  // Tables are numbered from the start of the input; tables_ holds those
  // from base_ on.
  TestTable& At(size_t index) { return tables_[index - base_]; }

  // Hands over the oldest tables that no stream can touch any more; a later
  // table waits for the earlier ones so the order of the input is kept.
  void Release() {
    if (!on_table_) return;
    while (!tables_.empty()) {
      bool held = false;
      for (const auto& [rank, st] : streams_) held |= st.open == base_ || st.last == base_;
      if (held) return;
      on_table_(std::move(tables_.front()));
      tables_.pop_front();
      ++base_;
    }
  }

  void Error(int line, std::string message) {
    if (errors_) errors_->push_back(ParseError{line, std::move(message)});
  }

  // A header line of `st`'s pending header.
  void Touch(Stream* st, int line) {
    st->pending.Touch(line);
    last_header_line_ = line;
  }

  // The input ends on a whole header followed by NCCL's init, cut off before
  // "Init COMPLETE" and before any column header: the run died (or its output
  // was cut) before its first size. Kept as a table without rows, incomplete,
  // like a header whose rows never came, so it is never taken for a run that
  // finished. A header whose init completed is left alone: an excerpt of the
  // log, not evidence that the benchmark failed.
  void CloseCutOffHeader(Stream* st) {
    PendingHeader& h = st->pending;
    if (!h.IsWholeHeader() || last_nccl_line_ <= h.first_line ||
        last_init_complete_line_ >= h.first_line) {
      return;
    }
    const int first_line = h.first_line;
    TestTable t;
    ApplyHeader(std::move(h), &t);
    t.first_line = first_line;
    t.last_line = last_nccl_line_;
    Error(first_line,
          "nccl-tests header without a result table: NCCL init was cut off (no \"Init "
          "COMPLETE\" after line " +
              std::to_string(first_line) + "), so the run stopped before its first size");
    tables_.push_back(std::move(t));
    st->pending = PendingHeader{};
    Release();
  }

  // Rows pasted without their column header: opened as a table of a layout
  // nccl-tests prints (today's since 2.x: 13 values, size count type redop
  // root time algbw busbw #wrong, time algbw busbw #wrong; the 2018 ones
  // without root (12) or without redop and root (11), `error` for #wrong)
  // when two lines in a row are whole rows of the same layout, with a data
  // type nccl-tests knows and growing sizes; one stray number line opens
  // nothing. Said as an error: the table's start is cut off. Returns whether
  // `line` is now to be read as a row of the open table.
  bool OpenHeaderlessTable(Stream* st, const CleanLine& line) {
    static const std::vector<Layout>* kLayouts = [] {
      auto* layouts = new std::vector<Layout>;
      for (const char* header :
           {"size count type redop root time algbw busbw #wrong time algbw busbw #wrong",
            "size count type redop time algbw busbw error time algbw busbw error",
            "size count type time algbw busbw error time algbw busbw error"}) {
        std::vector<std::string> unknown;
        layouts->push_back(*ParseColumnHeader(header, &unknown));
      }
      return layouts;
    }();
    static const std::set<std::string_view> kTypes = {
        "int8",  "uint8",  "int32",    "uint32", "int64",  "uint64",   "half",
        "float", "double", "bfloat16", "f8e4m3", "f8e5m2", "fp8_e4m3", "fp8_e5m2"};
    struct WholeRow {
      int64_t size_bytes;
      const Layout* layout;
    };
    auto whole_row = [&](const CleanLine& l) -> std::optional<WholeRow> {
      std::vector<std::string_view> tokens = Tokens(l.text);
      if (tokens.size() < 3 || !kTypes.count(tokens[2])) return std::nullopt;
      for (const Layout& layout : *kLayouts) {
        if (tokens.size() != layout.columns.size()) continue;
        SizeRow row;
        std::string error;
        if (ParseRow(l, layout, true, &scratch_, &row, &error)) {
          return WholeRow{row.size_bytes, &layout};
        }
      }
      return std::nullopt;
    };
    std::optional<WholeRow> now = whole_row(line);
    if (!now) {
      st->headerless_first.reset();
      return false;
    }
    std::optional<WholeRow> first =
        st->headerless_first ? whole_row(*st->headerless_first) : std::nullopt;
    if (!first || first->layout != now->layout || first->size_bytes >= now->size_bytes) {
      st->headerless_first = line;
      return false;
    }
    CleanLine first_line = std::move(*st->headerless_first);
    st->headerless_first.reset();
    OpenTable(st, *now->layout, first_line.number);
    Error(first_line.number,
          "table rows without their column header (from this line): the start of the table is "
          "cut off");
    TestTable& t = At(*st->open);
    std::string error;  // none: whole_row read this line as a whole row
    ParseRow(first_line, *now->layout, true, &scratch_, &t.rows.emplace_back(), &error);
    t.last_line = first_line.number;
    return true;
  }

  // A new header block begins: what was pending belonged to a run that died
  // before its column header.
  void StartHeaderBlock(Stream* st) {
    CloseWithRows(st);
    std::optional<std::string> command = st->pending.command_collective;
    st->pending = PendingHeader{};
    st->pending.command_collective = command;
  }

  // A new header while a table with rows is open: that table was cut short.
  // An open table without rows stays open so a duplicated header can join it.
  void CloseWithRows(Stream* st) {
    if (st->open && (!At(*st->open).rows.empty() || st->open_refused)) {
      st->open.reset();
      st->open_refused = false;
    }
  }

  // The open table's rows are two processes' interleaved (each ran the test
  // alone): which row is whose cannot be told, so none is read and the table
  // stays incomplete, as a run that did not measure what it was started for.
  void RefuseInterleaved(Stream* st, TestTable* t, int line) {
    t->rows.clear();
    st->open_refused = true;
    Error(line, "rows of two processes interleave (a second device line, " +
                    st->open_two_processes +
                    "): each process ran the test alone, as an nccl-tests build without MPI "
                    "does under a launcher, and which row is whose cannot be told: table not "
                    "read");
  }

  void OpenTable(Stream* st, Layout layout, int line) {
    if (st->open) {
      TestTable& t = At(*st->open);
      // Column header again before any row: a duplicated header, not a table.
      if (t.rows.empty() && !t.complete && st->layout == layout) {
        // The other process's header may come after this one's column
        // header: its rank 0 then meets the table's.
        for (const RankDevice& d : st->pending.devices) {
          for (const RankDevice& have : t.devices) {
            if (have.rank == d.rank && OtherProcess(have, d) && st->pending.two_processes.empty()) {
              st->pending.two_processes = TwoProcesses(
                  st->pending.first_line != 0 ? st->pending.first_line : line, d, have);
            }
          }
        }
        if (st->open_two_processes.empty()) {
          st->open_two_processes = std::move(st->pending.two_processes);
        }
        ApplyHeader(std::move(st->pending), &t);
        st->pending = PendingHeader{};
        return;
      }
    }
    st->open_two_processes = std::move(st->pending.two_processes);
    st->open_refused = false;
    TestTable t;
    t.rows.reserve(st->rows_hint);
    const int first_line = st->pending.first_line;
    ApplyHeader(std::move(st->pending), &t);
    t.first_line = first_line != 0 ? first_line : line;
    t.last_line = line;
    tables_.push_back(std::move(t));
    st->open = base_ + tables_.size() - 1;
    st->last = st->open;
    st->layout = std::move(layout);
    st->pending = PendingHeader{};
    Release();
  }

  std::vector<ParseError>* errors_;
  TableSink on_table_;
  std::map<int, Stream> streams_;
  std::deque<TestTable> tables_;
  size_t base_ = 0;
  std::vector<std::string_view> scratch_;  // a row's tokens, reused
  // The last column header read and what it gave: a month of nightly tables
  // repeats one header, and reading it (tokens, a map lookup and a string per
  // column) cost as much as several of a short table's rows.
  std::string last_header_;
  Layout last_layout_;
  std::vector<std::string> last_unknown_;
  // Line numbers of the last NCCL log line and of the last one saying "Init
  // COMPLETE" (CloseCutOffHeader).
  int last_nccl_line_ = 0;
  int last_init_complete_line_ = 0;
  int last_header_line_ = 0;
};
#pragma GCC diagnostic pop

NcclTestsTextParser::NcclTestsTextParser(std::vector<ParseError>* errors, TableSink on_table)
    : impl_(std::make_unique<Impl>(errors, std::move(on_table))) {}
NcclTestsTextParser::~NcclTestsTextParser() = default;
void NcclTestsTextParser::Feed(const CleanLine& line, bool nccl_log_line) {
  impl_->Feed(line, nccl_log_line);
}
void NcclTestsTextParser::Feed(const CleanLine& line) { Feed(line, IsNcclLogLine(line.text)); }
std::vector<TestTable> NcclTestsTextParser::Finish() { return impl_->Finish(); }

std::vector<TestTable> ParseNcclTestsText(const std::vector<CleanLine>& lines,
                                          std::vector<ParseError>* errors) {
  NcclTestsTextParser parser(errors);
  for (const CleanLine& line : lines) parser.Feed(line);
  return parser.Finish();
}

}  // namespace fabtrack
