#include "collector/parse/parsed_file_json.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "core/decimal_text.h"
#include "core/json_optional.h"

namespace fabtrack {
namespace {

using nlohmann::json;

// ",\n" and an indent of up to 128 levels, the text between two items.
const std::string kBreak = ",\n" + std::string(256, ' ');

// A writer of nlohmann's dump(2) layout (sorted keys, two-space indent) for
// the one record that a long file has thousands of: a parse of a month of
// nightly tables spent most of its time building and freeing json trees.
class Writer {
 public:
  Writer(std::string* out, int depth) : out_(out), depth_(depth) {}

  void BeginObject() {
    out_->push_back('{');
    first_.push_back(true);
    ++depth_;
  }
  void EndObject() { Close('}'); }
  void BeginArray() {
    out_->push_back('[');
    first_.push_back(true);
    ++depth_;
  }
  void EndArray() { Close(']'); }

  // Keys are this file's own literals: nothing to escape.
  void Key(std::string_view key) {
    Item();
    char quoted[64];
    if (key.size() + 4 <= sizeof quoted) {
      quoted[0] = '"';
      std::memcpy(quoted + 1, key.data(), key.size());
      std::memcpy(quoted + 1 + key.size(), "\": ", 3);
      out_->append(quoted, key.size() + 4);
    } else {
      out_->push_back('"');
      out_->append(key);
      out_->append("\": ", 3);
    }
  }
  // Starts an array element: ",\n" (no comma before the first) and the
  // indent, in one append.
  void Item() {
    const size_t skip = first_.back() ? 1 : 0;
    first_.back() = false;
    const size_t length = 2 + 2 * static_cast<size_t>(depth_);
    if (length <= kBreak.size()) {
      out_->append(kBreak.data() + skip, length - skip);
    } else {
      out_->append(",\n" + skip, 2 - skip);
      Indent();
    }
  }

  // The depth of what is open now, and marking an item of the open array as
  // written by someone else (AppendRowText): its closing bracket then goes
  // on a line of its own.
  int depth() const { return depth_; }
  void NoteItemWritten() { first_.back() = false; }

  void Null() { out_->append("null", 4); }
  void Bool(bool v) { v ? out_->append("true", 4) : out_->append("false", 5); }
  void Int(int64_t v) {
    char buf[24];
    auto [p, ec] = std::to_chars(buf, buf + sizeof buf, v);
    out_->append(buf, p);
  }
  // Shortest round-trip digits, as nlohmann prints them: an integral value
  // keeps ".0", a non-finite one is null.
  void Double(double v) {
    if (!std::isfinite(v)) return Null();
    char buf[40];
    std::string_view s(buf, static_cast<size_t>(FormatShortest(v, buf) - buf));
    out_->append(s);
    if (s.find_first_of(".e") == std::string_view::npos) out_->append(".0");
  }
  void String(std::string_view s) {
    for (char c : s) {
      // Anything to escape (or not ASCII, which nlohmann checks as UTF-8):
      // let nlohmann write it.
      if (c < 0x20 || c == '"' || c == '\\' || static_cast<unsigned char>(c) >= 0x7f) {
        out_->append(json(std::string(s)).dump(-1, ' ', false, json::error_handler_t::replace));
        return;
      }
    }
    out_->push_back('"');
    out_->append(s);
    out_->push_back('"');
  }

  template <typename T, typename F>
  void Optional(const std::optional<T>& v, F write) {
    if (v) {
      write(*v);
    } else {
      Null();
    }
  }
  void OptDouble(const std::optional<double>& v) {
    Optional(v, [&](double d) { Double(d); });
  }
  void OptInt(const std::optional<int64_t>& v) {
    Optional(v, [&](int64_t i) { Int(i); });
  }
  void OptString(const std::optional<std::string>& v) {
    Optional(v, [&](const std::string& s) { String(s); });
  }

 private:
  void Close(char c) {
    --depth_;
    if (!first_.back()) {
      out_->push_back('\n');
      Indent();
    }
    first_.pop_back();
    out_->push_back(c);
  }
  void Indent() { out_->append(static_cast<size_t>(2 * depth_), ' '); }

  std::string* out_;
  int depth_;
  std::vector<bool> first_;
};

void WriteMeasurement(Writer& w, const std::optional<Measurement>& m) {
  if (!m) return w.Null();
  w.BeginObject();
  w.Key("algbw");
  w.OptDouble(m->algbw_gbps);
  w.Key("busbw");
  w.OptDouble(m->busbw_gbps);
  if (m->iter_p99_us) {
    w.Key("iter");
    w.BeginObject();
    w.Key("cv_pct");
    w.OptDouble(m->iter_cv_pct);
    w.Key("max_us");
    w.OptDouble(m->iter_max_us);
    w.Key("min_us");
    w.OptDouble(m->iter_min_us);
    w.Key("p50_us");
    w.OptDouble(m->iter_p50_us);
    w.Key("p99_us");
    w.OptDouble(m->iter_p99_us);
    w.EndObject();
  }
  if (m->max_error) {
    w.Key("max_error");
    w.Double(*m->max_error);
  }
  w.Key("time_us");
  w.OptDouble(m->time_us);
  w.Key("wrong");
  w.OptInt(m->wrong);
  w.EndObject();
}

// A piece of RowTexts' fixed text. Every piece is followed by at least
// kPieceSlack readable bytes of its arena, so that a short piece is copied as
// one fixed-size block (a few vector moves, no call into memcpy).
struct Piece {
  const char* data = nullptr;
  size_t size = 0;
};
constexpr size_t kPieceSlack = 64;

// The text around a row's values when the rows array is at `depth` (its
// items one level deeper), worked out once: the rows are most of a table, and
// the general writer's break, indent and key (three appends per key) were
// most of the JSON's cost. What Writer writes for the same row, byte for
// byte (RowTextMatchesWriter in the tests).
struct RowTexts {
  Piece first_row, next_row;  // a row's opening up to the count's value
  Piece ip, oop, redop, root, size_bytes, type, row_end;
  Piece algbw, busbw, iter_cv, iter_max, iter_min, iter_p50, iter_p99, iter_end, max_error, time_us,
      wrong, measurement_end;
  size_t fixed_bound = 0;  // all of the above that one row can use

  explicit RowTexts(int depth) {
    auto indent = [](int d) { return std::string(static_cast<size_t>(2 * d), ' '); };
    const std::string row = indent(depth), field = indent(depth + 1), m = indent(depth + 2),
                      it = indent(depth + 3);
    auto key = [](const std::string& in, const char* name) {
      return ",\n" + in + "\"" + name + "\": ";
    };
    const std::string first = "\n" + row + "{\n" + field + "\"count\": ";
    const std::pair<Piece*, std::string> texts[] = {
        {&first_row, first},
        {&next_row, "," + first},
        {&ip, key(field, "ip")},
        {&oop, key(field, "oop")},
        {&redop, key(field, "redop")},
        {&root, key(field, "root")},
        {&size_bytes, key(field, "size_bytes")},
        {&type, key(field, "type")},
        {&row_end, "\n" + row + "}"},
        {&algbw, "{\n" + m + "\"algbw\": "},
        {&busbw, key(m, "busbw")},
        {&iter_cv, key(m, "iter") + "{\n" + it + "\"cv_pct\": "},
        {&iter_max, key(it, "max_us")},
        {&iter_min, key(it, "min_us")},
        {&iter_p50, key(it, "p50_us")},
        {&iter_p99, key(it, "p99_us")},
        {&iter_end, "\n" + m + "}"},
        {&max_error, key(m, "max_error")},
        {&time_us, key(m, "time_us")},
        {&wrong, key(m, "wrong")},
        {&measurement_end, "\n" + field + "}"},
    };
    size_t total = 0;
    for (const auto& [piece, text] : texts) total += text.size();
    arena_ = std::make_unique<char[]>(total + kPieceSlack);
    char* at = arena_.get();
    for (const auto& [piece, text] : texts) {
      std::memcpy(at, text.data(), text.size());
      *piece = Piece{at, text.size()};
      at += text.size();
    }
    std::memset(at, 0, kPieceSlack);
    const size_t measurement = algbw.size + busbw.size + iter_cv.size + iter_max.size +
                               iter_min.size + iter_p50.size + iter_p99.size + iter_end.size +
                               max_error.size + time_us.size + wrong.size + measurement_end.size;
    fixed_bound = next_row.size + ip.size + oop.size + redop.size + root.size + size_bytes.size +
                  type.size + row_end.size + 2 * measurement;
  }

 private:
  std::unique_ptr<char[]> arena_;
};

const RowTexts& RowTextsAt(int depth) {
  // One writer thread and a handful of depths: a small per-thread cache.
  thread_local std::vector<std::unique_ptr<RowTexts>> cache;
  if (depth < 0) depth = 0;
  if (cache.size() <= static_cast<size_t>(depth)) cache.resize(depth + 1);
  if (!cache[depth]) cache[depth] = std::make_unique<RowTexts>(depth);
  return *cache[depth];
}

bool PlainString(std::string_view s) {
  for (char c : s) {
    if (c < 0x20 || c == '"' || c == '\\' || static_cast<unsigned char>(c) >= 0x7f) return false;
  }
  return true;
}

// Writes into a buffer its caller has sized (RowText's bound).
class Cursor {
 public:
  explicit Cursor(char* at) : at_(at) {}
  char* at() const { return at_; }
  // A piece of at most kPieceSlack bytes as one block of that size: the
  // bytes after it land where the next text goes (the buffer's bound counts
  // them). Inlined: GCC kept it a call, twenty per row.
  [[gnu::always_inline]] void Text(const Piece& s) {
    if (s.size <= kPieceSlack) {
      std::memcpy(at_, s.data, kPieceSlack);
    } else {
      std::memcpy(at_, s.data, s.size);
    }
    at_ += s.size;
  }
  void Null() { Text4("null"); }
  void Int(int64_t v) { at_ = std::to_chars(at_, at_ + 24, v).ptr; }
  void Double(double v) {
    if (!std::isfinite(v)) return Null();
    char* start = at_;
    at_ = FormatShortest(v, at_);
    // A few bytes ("37.89"): looked at in place, not with two memchr calls;
    // tables' values, with one or two decimals, first where their point is.
    const size_t n = static_cast<size_t>(at_ - start);
    if ((n >= 3 && at_[-3] == '.') || (n >= 2 && at_[-2] == '.')) return;
    for (const char* p = start; p != at_; ++p) {
      if (*p == '.' || *p == 'e') return;
    }
    std::memcpy(at_, ".0", 2);
    at_ += 2;
  }
  void OptDouble(const std::optional<double>& v) { v ? Double(*v) : Null(); }
  void OptInt(const std::optional<int64_t>& v) { v ? Int(*v) : Null(); }
  void OptPlainString(const std::optional<std::string>& s) {
    if (!s) return Null();
    *at_++ = '"';
    std::memcpy(at_, s->data(), s->size());
    at_ += s->size();
    *at_++ = '"';
  }

 private:
  void Text4(const char* four) {
    std::memcpy(at_, four, 4);
    at_ += 4;
  }
  char* at_;
};

void MeasurementText(Cursor& c, const RowTexts& t, const std::optional<Measurement>& m) {
  if (!m) return c.Null();
  c.Text(t.algbw);
  c.OptDouble(m->algbw_gbps);
  c.Text(t.busbw);
  c.OptDouble(m->busbw_gbps);
  if (m->iter_p99_us) {
    c.Text(t.iter_cv);
    c.OptDouble(m->iter_cv_pct);
    c.Text(t.iter_max);
    c.OptDouble(m->iter_max_us);
    c.Text(t.iter_min);
    c.OptDouble(m->iter_min_us);
    c.Text(t.iter_p50);
    c.OptDouble(m->iter_p50_us);
    c.Text(t.iter_p99);
    c.OptDouble(m->iter_p99_us);
    c.Text(t.iter_end);
  }
  if (m->max_error) {
    c.Text(t.max_error);
    c.Double(*m->max_error);
  }
  c.Text(t.time_us);
  c.OptDouble(m->time_us);
  c.Text(t.wrong);
  c.OptInt(m->wrong);
  c.Text(t.measurement_end);
}

// One row as an item of the rows array at `depth`, appended in one piece;
// false (nothing written) for a row whose strings need escaping or are too
// long for the buffer: the general writer takes those.
bool AppendRowText(const SizeRow& r, int depth, bool first, std::string* out) {
  if ((r.type && !PlainString(*r.type)) || (r.redop && !PlainString(*r.redop))) return false;
  const RowTexts& t = RowTextsAt(depth);
  constexpr size_t kNumbers = 3 + 2 * 10;  // count, root, size_bytes; ten per measurement
  constexpr size_t kNumberBound = 32;      // an int64 or a double's shortest text and ".0"
  char buf[4096];
  // kPieceSlack: Cursor::Text writes that much past the last piece.
  const size_t bound = t.fixed_bound + kNumbers * kNumberBound + (r.type ? r.type->size() : 0) +
                       (r.redop ? r.redop->size() : 0) + 4 + kPieceSlack;
  if (bound > sizeof buf) return false;
  Cursor c(buf);
  c.Text(first ? t.first_row : t.next_row);
  c.OptInt(r.count);
  c.Text(t.ip);
  MeasurementText(c, t, r.ip);
  c.Text(t.oop);
  MeasurementText(c, t, r.oop);
  c.Text(t.redop);
  c.OptPlainString(r.redop);
  c.Text(t.root);
  r.root ? c.Int(*r.root) : c.Null();
  c.Text(t.size_bytes);
  c.Int(r.size_bytes);
  c.Text(t.type);
  c.OptPlainString(r.type);
  c.Text(t.row_end);
  out->append(buf, static_cast<size_t>(c.at() - buf));
  return true;
}

void WriteRow(Writer& w, const SizeRow& r) {
  w.Item();
  w.BeginObject();
  w.Key("count");
  w.OptInt(r.count);
  w.Key("ip");
  WriteMeasurement(w, r.ip);
  w.Key("oop");
  WriteMeasurement(w, r.oop);
  w.Key("redop");
  w.OptString(r.redop);
  w.Key("root");
  w.Optional(r.root, [&](int v) { w.Int(v); });
  w.Key("size_bytes");
  w.Int(r.size_bytes);
  w.Key("type");
  w.OptString(r.type);
  w.EndObject();
}

}  // namespace

void AppendTestTableJson(const TestTable& t, int depth, std::string* out) {
  AppendTestTableJson(t, depth, out, /*row_text=*/true);
}

void AppendTestTableJson(const TestTable& t, int depth, std::string* out, bool row_text) {
  Writer w(out, depth);
  w.BeginObject();
  w.Key("avg_busbw");
  w.OptDouble(t.avg_busbw);
  w.Key("collective");
  w.OptString(t.collective);
  w.Key("complete");
  w.Bool(t.complete);
  w.Key("hosts");
  w.BeginArray();
  for (const std::string& h : t.hosts) {
    w.Item();
    w.String(h);
  }
  w.EndArray();
  w.Key("lines");
  w.BeginArray();
  w.Item();
  w.Int(t.first_line);
  w.Item();
  w.Int(t.last_line);
  w.EndArray();
  w.Key("nccl_tests_version");
  w.OptString(t.nccl_tests_version);
  w.Key("oob_ok");
  w.Optional(t.oob_ok, [&](bool b) { w.Bool(b); });
  w.Key("ranks");
  w.Optional(t.ranks, [&](int r) { w.Int(r); });
  w.Key("rows");
  w.BeginArray();
  bool first = true;
  for (const SizeRow& r : t.rows) {
    if (row_text && AppendRowText(r, w.depth(), first, out)) {
      w.NoteItemWritten();
    } else {
      WriteRow(w, r);
    }
    first = false;
  }
  w.EndArray();
  w.EndObject();
}

nlohmann::json TestTableToJson(const TestTable& table) {
  std::string text;
  AppendTestTableJson(table, 0, &text);
  return json::parse(text);
}

nlohmann::json ParsedFileToJson(const ParsedFile& parsed) {
  json j = ParsedFileToJsonWithoutTests(parsed);
  json tests = json::array();
  for (const TestTable& t : parsed.tests) tests.push_back(TestTableToJson(t));
  j["tests"] = std::move(tests);
  return j;
}

nlohmann::json ParsedFileToJsonWithoutTests(const ParsedFile& parsed) {
  json net_devices = json::array();
  for (const NetDevice& d : parsed.log.net_devices) {
    json dev = {{"name", d.name},
                {"port", OptionalJson(d.port)},
                {"link", d.link.empty() ? json(nullptr) : json(d.link)},
                {"sharp", d.sharp}};
    if (!d.host.empty()) dev["host"] = d.host;
    dev["index"] = d.index;
    net_devices.push_back(dev);
  }
  json errors = json::array();
  for (const ParseError& e : parsed.errors) {
    errors.push_back({{"line", e.line}, {"message", e.message}});
  }
  json j = {{"file", parsed.file},
            {"nccl_version", OptionalJson(parsed.log.nccl_version)},
            {"network", OptionalJson(parsed.log.network)},
            {"networks", parsed.log.networks},
            {"transports", parsed.Transports()},
            {"gdrdma", OptionalJson(parsed.Gdrdma())},
            {"net_devices", net_devices},
            {"errors", errors}};
  const NcclLogInfo& log = parsed.log;
  if (parsed.dropped_errors || log.dropped_warnings || log.dropped_notices ||
      log.dropped_channels || log.dropped_comm_ranks) {
    j["dropped"] = {{"errors", parsed.dropped_errors},
                    {"warnings", log.dropped_warnings},
                    {"notices", log.dropped_notices},
                    {"channels", log.dropped_channels},
                    {"comm_ranks", log.dropped_comm_ranks}};
  }
  return j;
}

}  // namespace fabtrack
