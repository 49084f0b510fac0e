#include "collector/parse/parsed_file_json.h"

#include <charconv>
#include <cmath>
#include <cstring>
#include <string_view>

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

}  // namespace

void AppendTestTableJson(const TestTable& t, int depth, std::string* out) {
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
  for (const SizeRow& r : t.rows) {
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
