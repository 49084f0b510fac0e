#include "collector/parse/inspector_parser.h"

#include <algorithm>
#include <charconv>
#include <climits>
#include <cmath>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "core/bus_bandwidth.h"
#include "core/clock.h"
#include "core/statistics.h"

namespace fabtrack {
namespace {

using nlohmann::json;

// Collects one file's errors. A file of garbage would otherwise yield one
// error per line, millions for a large file.
class Errors {
 public:
  Errors(std::string_view file, std::vector<InspectorError>* out) : file_(file), out_(out) {}
  // Call once, at the end.
  void Finish() {
    if (dropped_ > 0) {
      out_->push_back({file_, 0, std::to_string(dropped_) + " more error(s) not listed"});
    }
  }
  void Add(int line, std::string message) {
    if (listed_ < kInspectorMaxErrors) {
      out_->push_back({file_, line, std::move(message)});
      ++listed_;
    } else {
      ++dropped_;
    }
  }

 private:
  std::string file_;
  std::vector<InspectorError>* out_;
  size_t listed_ = 0;
  size_t dropped_ = 0;
};

// A value from the input, quoted for a message: short, and printable even
// when the input is binary.
std::string Quote(std::string_view s) {
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 40; ++i) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    out += (c >= 0x20 && c < 0x7f) ? static_cast<char>(c) : '?';
  }
  if (s.size() > 40) out += "...";
  return out + "'";
}

struct Line {
  int number = 0;
  std::string_view text;
  bool terminated = false;  // followed by '\n'
};

// Calls f for every line, '\r' of CRLF removed. Line numbers saturate
// instead of overflowing on absurd inputs.
template <typename F>
void ForEachLine(std::string_view text, F f) {
  size_t pos = 0;
  int number = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    bool terminated = nl != std::string_view::npos;
    size_t end = terminated ? nl : text.size();
    std::string_view l = text.substr(pos, end - pos);
    if (!l.empty() && l.back() == '\r') l.remove_suffix(1);
    if (number < INT_MAX) ++number;
    f(Line{number, l, terminated});
    pos = terminated ? nl + 1 : text.size();
  }
}

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t") == std::string_view::npos; }

std::string TooLong(size_t bytes) {
  return "line is " + std::to_string(bytes) + " bytes, over the " +
         std::to_string(kInspectorMaxLineBytes) + "-byte limit; skipped";
}

// Inspector's names (ncclFuncToString) in fabtrack's spelling; the core table
// knows the collectives, not the point-to-point operations.
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

// Only doubles in [-2^63, 2^63) convert to int64 without UB; check first.
std::optional<int64_t> DoubleToInt64(double d) {
  if (!std::isfinite(d) || d < -9223372036854775808.0 || d >= 9223372036854775808.0) {
    return std::nullopt;
  }
  return static_cast<int64_t>(d);
}

// No collective of a working job runs for a day; a larger time is a timer
// difference that wrapped around (stop read before start), not a measurement.
constexpr int64_t kMaxExecTimeUs = 86'400'000'000;

// ---------------------------------------------------------------------------
// JSON lines

// printf's "%lf" writes infinities as bare inf/-inf (and NaN as nan when not
// quoted), which is not JSON. Replaces such words outside strings with null;
// sets *changed when there were any.
std::string NullBareNonFinite(std::string_view line, bool* changed) {
  std::string out;
  out.reserve(line.size());
  bool in_string = false, escape = false;
  auto is_word = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  };
  for (size_t i = 0; i < line.size(); ++i) {
    char c = line[i];
    if (in_string) {
      if (escape) {
        escape = false;
      } else if (c == '\\') {
        escape = true;
      } else if (c == '"') {
        in_string = false;
      }
      out += c;
      continue;
    }
    if (c == '"') {
      in_string = true;
      out += c;
      continue;
    }
    bool replaced = false;
    if (i == 0 || !is_word(line[i - 1])) {
      for (std::string_view word : {"-inf", "inf", "-nan", "nan"}) {
        size_t end = i + word.size();
        if (line.substr(i, word.size()) == word && (end >= line.size() || !is_word(line[end]))) {
          out += "null";
          i = end - 1;
          replaced = *changed = true;
          break;
        }
      }
    }
    if (!replaced) out += c;
  }
  return out;
}

// Typed field access for one record; reports what it cannot use.
class Fields {
 public:
  Fields(Errors* errors, int line) : errors_(errors), line_(line) {}

  static const json* Find(const json& obj, const char* key) {
    if (!obj.is_object()) return nullptr;
    auto it = obj.find(key);
    if (it == obj.end() || it->is_null()) return nullptr;
    return &*it;
  }

  void Missing(const char* key) { errors_->Add(line_, std::string("missing field '") + key + "'"); }

  std::optional<int64_t> Int(const json& obj, const char* key, int64_t min, int64_t max) {
    const json* v = Find(obj, key);
    if (!v) return std::nullopt;
    std::optional<int64_t> n;
    std::string shown;
    if (v->is_number_unsigned()) {
      uint64_t u = v->get<uint64_t>();
      shown = std::to_string(u);
      if (u <= static_cast<uint64_t>(INT64_MAX)) n = static_cast<int64_t>(u);
    } else if (v->is_number_integer()) {
      n = v->get<int64_t>();
      shown = std::to_string(*n);
    } else if (v->is_number_float()) {
      double d = v->get<double>();
      shown = v->dump();
      if (std::floor(d) != d) {
        errors_->Add(line_, std::string("field '") + key + "' is not an integer: " + shown);
        return std::nullopt;
      }
      n = DoubleToInt64(d);
    } else {
      errors_->Add(line_, std::string("field '") + key + "' is not a number");
      return std::nullopt;
    }
    if (!n || *n < min || *n > max) {
      errors_->Add(line_, std::string("field '") + key + "' out of range: " + shown);
      return std::nullopt;
    }
    return n;
  }

  std::optional<int> SmallInt(const json& obj, const char* key, int min) {
    auto n = Int(obj, key, min, INT_MAX);
    if (!n) return std::nullopt;
    return static_cast<int>(*n);
  }

  // The plugin writes NaN as the string "nan": absent, not an error.
  std::optional<double> NonNegativeDouble(const json& obj, const char* key) {
    const json* v = Find(obj, key);
    if (!v) return std::nullopt;
    if (v->is_string()) {
      const auto& s = v->get_ref<const std::string&>();
      if (s != "nan" && s != "-nan") {
        errors_->Add(line_, std::string("field '") + key + "' is not a number");
      }
      return std::nullopt;
    }
    if (!v->is_number()) {
      errors_->Add(line_, std::string("field '") + key + "' is not a number");
      return std::nullopt;
    }
    double d = v->get<double>();
    if (!std::isfinite(d)) return std::nullopt;
    if (d < 0) {
      errors_->Add(line_, std::string("field '") + key + "' out of range: " + v->dump());
      return std::nullopt;
    }
    return d;
  }

  std::optional<std::string> String(const json& obj, const char* key) {
    const json* v = Find(obj, key);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      errors_->Add(line_, std::string("field '") + key + "' is not a string");
      return std::nullopt;
    }
    return v->get<std::string>();
  }

 private:
  Errors* errors_;
  int line_;
};

// One record object; nullopt (with errors reported) when it is not usable.
std::optional<InspectorRecord> ReadJsonRecord(const json& doc, int line, Errors* errors) {
  Fields f(errors, line);
  InspectorRecord r;
  r.format = InspectorFormat::kJsonLines;
  r.line = line;

  // Operation kind by its object: "coll_perf" or (2.30+) "p2p_perf", whose
  // fields carry the same names with the prefix "p2p".
  const json* perf = Fields::Find(doc, "coll_perf");
  const char* prefix = "coll";
  if (!perf) {
    perf = Fields::Find(doc, "p2p_perf");
    prefix = "p2p";
  }
  if (!perf) {
    f.Missing("coll_perf");
    return std::nullopt;
  }
  if (!perf->is_object()) {
    errors->Add(line, std::string("field '") + prefix + "_perf' is not an object");
    return std::nullopt;
  }
  r.p2p = std::string_view(prefix) == "p2p";
  auto key = [&](const char* suffix) { return std::string(prefix) + suffix; };

  auto name = f.String(*perf, prefix);
  auto size = f.Int(*perf, key("_msg_size_bytes").c_str(), 0, INT64_MAX);
  auto time = f.Int(*perf, key("_exec_time_us").c_str(), 0, kMaxExecTimeUs);
  bool usable = true;
  if (!name) {
    if (!Fields::Find(*perf, prefix)) f.Missing(prefix);
    usable = false;
  }
  if (!size) {
    if (!Fields::Find(*perf, key("_msg_size_bytes").c_str())) {
      f.Missing(key("_msg_size_bytes").c_str());
    }
    usable = false;
  }
  if (!time) {
    if (!Fields::Find(*perf, key("_exec_time_us").c_str())) f.Missing(key("_exec_time_us").c_str());
    usable = false;
  }
  if (!usable) return std::nullopt;
  r.collective = CollectiveName(*name);
  r.message_bytes = *size;
  r.exec_time_us = static_cast<double>(*time);
  r.seq = f.Int(*perf, key("_sn").c_str(), 0, INT64_MAX);
  r.timing_source = f.String(*perf, key("_timing_source").c_str());
  r.algbw_gbps = f.NonNegativeDouble(*perf, key("_algobw_gbs").c_str());
  r.busbw_gbps = f.NonNegativeDouble(*perf, key("_busbw_gbs").c_str());
  if (r.p2p) r.peer = f.SmallInt(*perf, "p2p_peer", 0);
  if (const json* ts = Fields::Find(*perf, "event_trace_ts")) {
    r.start_us = f.Int(*ts, key("_start_ts").c_str(), 0, INT64_MAX);
  }

  if (const json* h = Fields::Find(doc, "header")) {
    r.comm_id = f.String(*h, "id");
    if (r.comm_id) {
      r.comm_hash = ParseHex(*r.comm_id);
      if (!r.comm_hash) errors->Add(line, "field 'id' is not a hex hash: " + Quote(*r.comm_id));
    }
    r.comm_name = f.String(*h, "comm_name");
    if (r.comm_name == "unknown") r.comm_name.reset();
    r.rank = f.SmallInt(*h, "rank", 0);
    r.nranks = f.SmallInt(*h, "n_ranks", 1);
    r.nnodes = f.SmallInt(*h, "nnodes", 1);
    if (r.rank && r.nranks && *r.rank >= *r.nranks) {
      errors->Add(line, "rank " + std::to_string(*r.rank) + " is not below n_ranks " +
                            std::to_string(*r.nranks));
      return std::nullopt;
    }
  }
  if (const json* m = Fields::Find(doc, "metadata")) {
    r.format_version = f.String(*m, "inspector_output_format_version");
    r.timestamp_us = f.Int(*m, "dump_timestamp_us", 0, INT64_MAX);
    r.host = f.String(*m, "hostname");
    r.pid = f.Int(*m, "pid", 0, INT64_MAX);
  }
  return r;
}

// ---------------------------------------------------------------------------
// Prometheus textfile

struct Sample {
  std::string_view name;
  std::map<std::string, std::string> labels;
  double value = 0;
};

bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || (c >= '0' && c <= '9'); }

std::optional<double> ParsePromValue(std::string_view s) {
  if (s == "NaN" || s == "nan") return std::nan("");
  if (s == "+Inf" || s == "Inf" || s == "inf") return HUGE_VAL;
  if (s == "-Inf" || s == "-inf") return -HUGE_VAL;
  if (!s.empty() && s[0] == '+') s.remove_prefix(1);
  double d = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
  if (s.empty() || ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return d;
}

// One sample line of the text exposition format: name{labels} value [ts].
// Returns the reason when it is not one.
std::optional<Sample> ParseSample(std::string_view s, std::string* why) {
  Sample out;
  size_t i = 0;
  auto skip_ws = [&] {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  };
  auto fail = [&](const std::string& reason) {
    *why = reason + " (column " + std::to_string(i + 1) + ")";
    return std::nullopt;
  };
  skip_ws();
  size_t start = i;
  if (i >= s.size() || !(IsNameStart(s[i]) || s[i] == ':')) return fail("no metric name");
  while (i < s.size() && (IsNameChar(s[i]) || s[i] == ':')) ++i;
  out.name = s.substr(start, i - start);
  size_t after_name = i;
  skip_ws();
  if (i >= s.size() || s[i] != '{') i = after_name;  // no labels: the blank separates the value
  if (i < s.size() && s[i] == '{') {
    ++i;
    while (true) {
      skip_ws();
      if (i < s.size() && s[i] == '}') {
        ++i;
        break;
      }
      size_t ls = i;
      if (i >= s.size() || !IsNameStart(s[i])) return fail("bad label name");
      while (i < s.size() && IsNameChar(s[i])) ++i;
      std::string label(s.substr(ls, i - ls));
      skip_ws();
      if (i >= s.size() || s[i] != '=') return fail("no '=' after label " + Quote(label));
      ++i;
      skip_ws();
      if (i >= s.size() || s[i] != '"') return fail("label value not quoted");
      ++i;
      std::string value;
      bool closed = false;
      while (i < s.size()) {
        char c = s[i++];
        if (c == '"') {
          closed = true;
          break;
        }
        if (c == '\\' && i < s.size()) {
          char e = s[i++];
          value += e == 'n' ? '\n' : e;
        } else {
          value += c;
        }
      }
      if (!closed) return fail("label value not closed");
      if (!out.labels.emplace(label, std::move(value)).second) {
        return fail("label " + Quote(label) + " twice");
      }
      skip_ws();
      if (i < s.size() && s[i] == ',') {
        ++i;
      } else if (i >= s.size() || s[i] != '}') {
        return fail("expected ',' or '}'");
      }
    }
  }
  if (i >= s.size() || (s[i] != ' ' && s[i] != '\t')) return fail("no value");
  skip_ws();
  size_t vs = i;
  while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
  auto value = ParsePromValue(s.substr(vs, i - vs));
  if (!value) {
    std::string shown = Quote(s.substr(vs, i - vs));
    i = vs;
    return fail("bad value " + shown);
  }
  out.value = *value;
  skip_ws();
  if (i < s.size()) {  // an optional integer timestamp (ms), unused
    size_t ts = i;
    int64_t ignored = 0;
    while (i < s.size() && s[i] != ' ' && s[i] != '\t') ++i;
    auto [p, ec] = std::from_chars(s.data() + ts, s.data() + i, ignored);
    if (ec != std::errc() || p != s.data() + i) {
      i = ts;
      return fail("unexpected text after the value");
    }
    skip_ws();
    if (i < s.size()) return fail("unexpected text after the timestamp");
  }
  return out;
}

enum class Metric { kExecTime, kBusBw, kAlgBw, kOther };

Metric MetricOf(std::string_view name) {
  if (name == "nccl_collective_exec_time_microseconds" ||
      name == "nccl_p2p_exec_time_microseconds") {
    return Metric::kExecTime;
  }
  if (name == "nccl_bus_bandwidth_gbs" || name == "nccl_p2p_bus_bandwidth_gbs") {
    return Metric::kBusBw;
  }
  if (name == "nccl_algorithm_bandwidth_gbs") return Metric::kAlgBw;
  return Metric::kOther;
}

// The samples of one label set: one record.
struct PromGroup {
  int line = 0;
  std::map<std::string, std::string> labels;
  bool p2p_metric = false;
  bool seen[3] = {false, false, false};
  double values[3] = {0, 0, 0};
};

// "32-33MB" (2.30 bucket), "8.00MB" / "512B" (2.29), "0B". 1024-based units.
bool ParseSizeLabel(std::string_view s, InspectorRecord* r) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {
      {"TB", 1099511627776.0}, {"GB", 1073741824.0}, {"MB", 1048576.0}, {"KB", 1024.0}, {"B", 1.0}};
  double unit = 0;
  for (const auto& [suffix, bytes] : kUnits) {
    if (s.size() > suffix.size() && s.ends_with(suffix)) {
      unit = bytes;
      s.remove_suffix(suffix.size());
      break;
    }
  }
  if (unit == 0) return false;
  auto number = [](std::string_view n) -> std::optional<double> {
    double d = 0;
    auto [p, ec] = std::from_chars(n.data(), n.data() + n.size(), d);
    if (n.empty() || ec != std::errc() || p != n.data() + n.size() || !std::isfinite(d) || d < 0) {
      return std::nullopt;
    }
    return d;
  };
  auto bytes = [&](double v) { return DoubleToInt64(std::round(v * unit)); };
  size_t dash = s.find('-', 1);
  if (dash != std::string_view::npos) {
    auto lo = number(s.substr(0, dash));
    auto hi = number(s.substr(dash + 1));
    if (!lo || !hi || *hi < *lo) return false;
    auto lo_b = bytes(*lo), hi_b = bytes(*hi);
    if (!lo_b || !hi_b) return false;
    r->message_bytes = *lo_b;
    r->message_bytes_upper = *hi_b;
    r->message_bytes_exact = false;
    return true;
  }
  auto v = number(s);
  if (!v) return false;
  auto b = bytes(*v);
  if (!b) return false;
  r->message_bytes = *b;
  r->message_bytes_exact = unit == 1.0 && std::floor(*v) == *v;
  return true;
}

// "2025-10-17T03:31:47Z" (whole seconds, UTC, nothing else) to µs since the epoch.
std::optional<int64_t> ParseUtcTimestamp(std::string_view s) {
  if (s.size() != 20 || s[10] != 'T' || s[19] != 'Z') return std::nullopt;
  auto seconds = ParseIsoSeconds(s);
  if (!seconds) return std::nullopt;
  return static_cast<int64_t>(*seconds) * 1000000;
}

std::optional<InspectorRecord> ReadPromGroup(const PromGroup& g, std::string_view gpu_uuid,
                                             Errors* errors) {
  InspectorRecord r;
  r.format = InspectorFormat::kPrometheus;
  r.line = g.line;
  auto label = [&](const char* name) -> const std::string* {
    auto it = g.labels.find(name);
    return it == g.labels.end() ? nullptr : &it->second;
  };
  // The writer puts "unknown" where it has nothing.
  auto known = [&](const char* name) -> std::optional<std::string> {
    const std::string* v = label(name);
    if (!v || v->empty() || *v == "unknown") return std::nullopt;
    return *v;
  };
  auto integer = [&](const char* name, int64_t min, int64_t max) -> std::optional<int64_t> {
    const std::string* v = label(name);
    if (!v) return std::nullopt;
    int64_t n = 0;
    auto [p, ec] = std::from_chars(v->data(), v->data() + v->size(), n);
    if (ec != std::errc() || p != v->data() + v->size() || n < min || n > max) {
      errors->Add(g.line, std::string("label '") + name + "' is not a valid number: " + Quote(*v));
      return std::nullopt;
    }
    return n;
  };
  auto small = [&](const char* name, int min) -> std::optional<int> {
    auto n = integer(name, min, INT_MAX);
    if (!n) return std::nullopt;
    return static_cast<int>(*n);
  };

  const int kExec = static_cast<int>(Metric::kExecTime);
  if (!g.seen[kExec]) {
    errors->Add(g.line, g.p2p_metric ? "no nccl_p2p_exec_time_microseconds sample for these labels"
                                     : "no nccl_collective_exec_time_microseconds sample for "
                                       "these labels");
    return std::nullopt;
  }
  double exec = g.values[kExec];
  if (!std::isfinite(exec) || exec < 0 || exec > static_cast<double>(kMaxExecTimeUs)) {
    errors->Add(g.line, "exec time out of range: " + std::to_string(exec));
    return std::nullopt;
  }
  r.exec_time_us = exec;
  const std::string* coll = label("collective");
  if (const std::string* op = label("p2p_operation")) {
    coll = op;
    r.p2p = true;
  }
  if (!coll) {
    errors->Add(g.line, "missing label 'collective'");
    return std::nullopt;
  }
  r.collective = CollectiveName(*coll);
  const std::string* size = label("message_size");
  if (!size) {
    errors->Add(g.line, "missing label 'message_size'");
    return std::nullopt;
  }
  if (!ParseSizeLabel(*size, &r)) {
    errors->Add(g.line, "label 'message_size' not understood: " + Quote(*size));
    return std::nullopt;
  }
  // The 2.30 label set aggregates an interval; 2.29 has one sample set per
  // operation, told apart by its sequence number.
  r.aggregated = label("coll_sn") == nullptr;
  for (Metric m : {Metric::kBusBw, Metric::kAlgBw}) {
    int k = static_cast<int>(m);
    if (!g.seen[k] || !std::isfinite(g.values[k])) continue;
    if (g.values[k] < 0) {
      errors->Add(g.line, "bandwidth out of range: " + std::to_string(g.values[k]));
      continue;
    }
    (m == Metric::kBusBw ? r.busbw_gbps : r.algbw_gbps) = g.values[k];
  }

  r.format_version = known("version");
  r.job_id = known("slurm_job_id");
  r.comm_id = known("comm_id");
  if (r.comm_id) {
    r.comm_hash = ParseHex(*r.comm_id);
    if (!r.comm_hash)
      errors->Add(g.line, "label 'comm_id' is not a hex hash: " + Quote(*r.comm_id));
  }
  r.comm_name = known("comm_name");
  r.host = known("hostname");
  if (!r.host) r.host = known("node");
  r.gpu = known("gpu");
  if (!r.gpu) r.gpu = known("gpu_device_id");
  if (!gpu_uuid.empty()) r.gpu_uuid = std::string(gpu_uuid);
  r.rank = small("rank", 0);
  // The README of 2.29 says n_ranks, its code writes nranks.
  r.nranks = label("nranks") ? small("nranks", 1) : small("n_ranks", 1);
  r.nnodes = small("n_nodes", 1);
  r.pid = integer("pid", 0, INT64_MAX);
  r.seq = integer("coll_sn", 0, INT64_MAX);
  r.timing_source = known("coll_timing_source");
  if (r.rank && r.nranks && *r.rank >= *r.nranks) {
    errors->Add(g.line, "rank " + std::to_string(*r.rank) + " is not below nranks " +
                            std::to_string(*r.nranks));
    return std::nullopt;
  }
  if (const std::string* ts = label("timestamp"); ts && *ts != "unknown") {
    r.timestamp_us = ParseUtcTimestamp(*ts);
    if (!r.timestamp_us) errors->Add(g.line, "label 'timestamp' not understood: " + Quote(*ts));
  }
  // "RING_SIMPLE", "NVLS_TREE_LL128": protocols have no '_', algorithms may.
  if (const std::string* ap = label("algo_proto")) {
    std::string_view v = *ap;
    size_t us = v.rfind('_');
    std::string_view algo = us == std::string_view::npos ? v : v.substr(0, us);
    std::string_view proto = us == std::string_view::npos ? "" : v.substr(us + 1);
    auto keep = [](std::string_view x) -> std::optional<std::string> {
      if (x.empty() || x == "unknown" || x == "Unknown") return std::nullopt;
      return std::string(x);
    };
    r.algorithm = keep(algo);
    r.protocol = keep(proto);
  }
  return r;
}

std::string_view BaseName(std::string_view path) {
  size_t slash = path.rfind('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

}  // namespace

std::string InspectorError::ToString() const {
  if (line > 0) return file + ":" + std::to_string(line) + ": " + message;
  return file + ": " + message;
}

InspectorParseResult ParseInspectorJsonLines(std::string_view text, std::string_view file_name) {
  InspectorParseResult out;
  Errors errors(file_name, &out.errors);
  ForEachLine(text, [&](const Line& l) {
    if (IsBlank(l.text)) return;
    if (l.text.size() > kInspectorMaxLineBytes) {
      errors.Add(l.number, TooLong(l.text.size()));
      if (!l.terminated) out.truncated = true;
      return;
    }
    json doc;
    std::string problem;
    try {
      doc = json::parse(l.text);
    } catch (const json::parse_error& e) {
      problem = "invalid JSON at column " + std::to_string(e.byte);
    } catch (const json::out_of_range&) {
      problem = "invalid JSON (a number out of range)";
    } catch (const std::exception&) {
      problem = "invalid JSON";
    }
    if (!problem.empty()) {
      bool changed = false;
      std::string cleaned = NullBareNonFinite(l.text, &changed);
      if (changed) {
        doc = json::parse(cleaned, nullptr, /*allow_exceptions=*/false);
        if (!doc.is_discarded()) problem.clear();
      }
    }
    if (!problem.empty()) {
      // A last line without its newline is the writer's current record, or
      // the one it died in: a cut, not corruption.
      if (!l.terminated) {
        out.truncated = true;
        errors.Add(l.number, "last line is cut short (still being written, or the process died); " +
                                 std::to_string(out.records.size()) + " earlier record(s) kept");
      } else {
        errors.Add(l.number, "not a record: " + problem);
      }
      return;
    }
    if (!doc.is_object()) {
      errors.Add(l.number, "not a record: not a JSON object");
      return;
    }
    try {
      if (auto r = ReadJsonRecord(doc, l.number, &errors)) out.records.push_back(std::move(*r));
    } catch (const std::exception& e) {
      // The typed accessors check before reading; a parser must still never throw.
      errors.Add(l.number, std::string("internal error reading the record: ") + e.what());
    }
  });
  errors.Finish();
  return out;
}

InspectorParseResult ParseInspectorPrometheus(std::string_view text, std::string_view file_name) {
  InspectorParseResult out;
  Errors errors(file_name, &out.errors);
  std::string_view gpu_uuid = BaseName(file_name);
  constexpr std::string_view kPrefix = "nccl_inspector_metrics_", kSuffix = ".prom";
  if (gpu_uuid.size() > kPrefix.size() + kSuffix.size() && gpu_uuid.starts_with(kPrefix) &&
      gpu_uuid.ends_with(kSuffix)) {
    gpu_uuid = gpu_uuid.substr(kPrefix.size(), gpu_uuid.size() - kPrefix.size() - kSuffix.size());
  } else {
    gpu_uuid = {};
  }

  std::vector<PromGroup> groups;
  std::map<std::string, size_t> latest;  // label set -> its newest group
  size_t samples = 0;
  ForEachLine(text, [&](const Line& l) {
    std::string_view t = l.text;
    if (IsBlank(t) || t[t.find_first_not_of(" \t")] == '#') return;
    // The file is rewritten in place; a line without its newline may have
    // been cut in the middle of its value, which would still parse.
    if (!l.terminated) {
      out.truncated = true;
      errors.Add(l.number, "last line has no newline: cut short while being written; " +
                               std::to_string(samples) + " earlier sample(s) kept");
      return;
    }
    if (t.size() > kInspectorMaxLineBytes) {
      errors.Add(l.number, TooLong(t.size()));
      return;
    }
    std::string why;
    auto s = ParseSample(t, &why);
    if (!s) {
      errors.Add(l.number, "not a Prometheus sample: " + why);
      return;
    }
    Metric m = MetricOf(s->name);
    if (m == Metric::kOther) return;
    ++samples;
    // Length-prefixed, so that no label value can fake another label set.
    std::string key;
    for (const auto& [k, v] : s->labels) {
      key += std::to_string(k.size()) + ":" + k + std::to_string(v.size()) + ":" + v;
    }
    int mi = static_cast<int>(m);
    auto it = latest.find(key);
    // The same metric again for the same labels (a file appended to rather
    // than rewritten) starts another record.
    if (it == latest.end() || groups[it->second].seen[mi]) {
      PromGroup g;
      g.line = l.number;
      g.labels = std::move(s->labels);
      groups.push_back(std::move(g));
      latest[key] = groups.size() - 1;
      it = latest.find(key);
    }
    PromGroup& g = groups[it->second];
    g.seen[mi] = true;
    g.values[mi] = s->value;
    g.p2p_metric |= s->name.starts_with("nccl_p2p_");
  });
  for (const PromGroup& g : groups) {
    if (auto r = ReadPromGroup(g, gpu_uuid, &errors)) out.records.push_back(std::move(*r));
  }
  errors.Finish();
  return out;
}

InspectorParseResult ParseInspectorFile(std::string_view text, std::string_view file_name) {
  if (file_name.ends_with(".prom")) return ParseInspectorPrometheus(text, file_name);
  return ParseInspectorJsonLines(text, file_name);
}

std::vector<InspectorGroupSummary> SummarizeInspector(const std::vector<InspectorRecord>& records,
                                                      const InspectorSummaryOptions& options) {
  using Key = std::tuple<std::string, std::string, int64_t>;
  std::map<Key, std::vector<const InspectorRecord*>> groups;
  for (const InspectorRecord& r : records) {
    std::string comm = r.comm_id ? *r.comm_id : r.comm_name.value_or("");
    groups[Key{comm, r.collective, r.message_bytes}].push_back(&r);
  }

  std::vector<InspectorGroupSummary> out;
  for (const auto& [key, recs] : groups) {
    InspectorGroupSummary s;
    std::tie(s.communicator, s.collective, s.message_bytes) = key;
    s.count = recs.size();
    std::vector<double> times, busbw;
    struct Acc {
      double sum = 0;
      size_t count = 0;
      std::string host;
    };
    std::map<int, Acc> ranks;
    std::map<std::string, Acc> hosts;
    for (const InspectorRecord* r : recs) {
      times.push_back(r->exec_time_us);
      if (r->busbw_gbps) busbw.push_back(*r->busbw_gbps);
      if (!s.nranks) s.nranks = r->nranks;
      if (r->rank) {
        Acc& a = ranks[*r->rank];
        if (a.count == 0) a.host = r->host.value_or("");
        a.sum += r->exec_time_us;
        ++a.count;
      }
      if (r->host) {
        Acc& h = hosts[*r->host];
        h.sum += r->exec_time_us;
        ++h.count;
      }
    }
    std::sort(times.begin(), times.end());
    s.median_us = stats::QuantileOfSorted(times, 0.5);
    s.p90_us = stats::QuantileOfSorted(times, 0.9);
    s.max_us = times.back();
    if (!busbw.empty()) s.median_busbw_gbps = *stats::Median(busbw);

    // Ratios to the typical participant; 0 when that is 0 and no ratio means anything.
    auto ratio = [](double mean, double ref) { return ref > 0 ? mean / ref : 0.0; };
    std::vector<double> rank_means;
    for (const auto& [rank, a] : ranks) rank_means.push_back(a.sum / a.count);
    if (!rank_means.empty()) s.median_rank_mean_us = *stats::Median(rank_means);
    for (const auto& [rank, a] : ranks) {
      double mean = a.sum / a.count;
      s.slowest_ranks.push_back({rank, a.host, a.count, mean, ratio(mean, *s.median_rank_mean_us)});
    }
    auto by_ratio = [](const auto& a, const auto& b) { return a.ratio > b.ratio; };
    std::stable_sort(s.slowest_ranks.begin(), s.slowest_ranks.end(), by_ratio);

    std::vector<double> host_means;
    for (const auto& [host, h] : hosts) host_means.push_back(h.sum / h.count);
    if (!hosts.empty()) {
      double ref = s.median_rank_mean_us ? *s.median_rank_mean_us : *stats::Median(host_means);
      for (const auto& [host, h] : hosts) {
        InspectorHostStat hs{host, h.count, h.sum / h.count, ratio(h.sum / h.count, ref), {}};
        double worst = -1;
        for (const auto& [rank, a] : ranks) {
          if (a.host == host && a.sum / a.count > worst) {
            worst = a.sum / a.count;
            hs.slowest_rank = rank;
          }
        }
        s.slowest_hosts.push_back(std::move(hs));
      }
      std::stable_sort(s.slowest_hosts.begin(), s.slowest_hosts.end(), by_ratio);
    }
    if (s.slowest_ranks.size() > options.top_n) s.slowest_ranks.resize(options.top_n);
    if (s.slowest_hosts.size() > options.top_n) s.slowest_hosts.resize(options.top_n);
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fabtrack
