// Inspector's Prometheus textfile output: one record per label set.
#include <algorithm>
#include <charconv>
#include <cmath>
#include <exception>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "collector/parse/inspector_input.h"
#include "collector/parse/inspector_parser.h"
#include "core/bus_bandwidth.h"
#include "core/clock.h"
#include "core/json_instances.h"

namespace fabtrack::inspector_internal {
namespace {

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

InspectorParseResult ParseTextfile(std::string_view text, std::string_view file_name) {
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

}  // namespace fabtrack::inspector_internal
