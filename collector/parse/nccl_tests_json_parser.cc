#include "collector/parse/nccl_tests_json_parser.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "collector/parse/json_non_finite.h"
#include "core/bus_bandwidth.h"
#include "core/json_instances.h"

namespace fabtrack {
namespace {

using nlohmann::json;

int LineAt(std::string_view text, size_t byte) {
  if (byte > text.size()) byte = text.size();
  int line = 1;
  for (size_t i = 0; i < byte; ++i) line += text[i] == '\n';
  return line;
}

// ---------------------------------------------------------------------------
// A structural scan of the raw text. nlohmann gives no positions for values,
// and a report cut short is not JSON at all, so this scan finds where each
// result object starts and where the text could be cut and closed to yield
// valid JSON holding only completely written values.

struct CutPoint {
  size_t pos = 0;       // keep sanitized[0, pos)
  std::string closers;  // then append these
};

struct Scan {
  std::string sanitized;             // bare nan/inf replaced by null; same lines
  std::vector<int> result_lines;     // line of each object in "results"
  std::vector<CutPoint> cut_points;  // at depth <= 2 only
  bool unclosed = false;             // text ended inside a container or string
};

Scan ScanJson(std::string_view raw) {
  Scan s;
  // nccl-tests prints NaN as "nan" but infinities with a bare %lf, which is
  // not JSON; read them as null (absent). The scan is of the cleaned text.
  s.sanitized = NullBareNonFinite(raw);
  const std::string_view text = s.sanitized;
  struct Open {
    char bracket;
    std::string key;  // key of this container in its parent object
  };
  std::vector<Open> stack;
  bool in_string = false, escape = false;
  std::string current, last_string, pending_key;
  int line = 1;
  auto closers = [&] {
    std::string c;
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) c += it->bracket == '{' ? '}' : ']';
    return c;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      const bool escaped = escape;  // c is the escaped character: not collected
      in_string = StaysInJsonString(c, &escape);
      if (!in_string) {
        last_string = std::move(current);
        current.clear();
      } else if (!escaped && !escape && current.size() < 64) {
        current += c;
      }
      continue;
    }
    switch (c) {
      case '"':
        in_string = true;
        break;
      case ':':
        pending_key = last_string;
        break;
      case '{':
      case '[': {
        bool parent_is_object = !stack.empty() && stack.back().bracket == '{';
        if (c == '{' && stack.size() == 2 && stack[0].bracket == '{' && stack[1].bracket == '[' &&
            stack[1].key == "results") {
          s.result_lines.push_back(line);
        }
        stack.push_back(Open{c, parent_is_object ? pending_key : ""});
        pending_key.clear();
        break;
      }
      case '}':
      case ']':
        if (!stack.empty()) stack.pop_back();
        if (!stack.empty() && stack.size() <= 2) s.cut_points.push_back({i + 1, closers()});
        break;
      case ',':
        if (!stack.empty() && stack.size() <= 2) s.cut_points.push_back({i, closers()});
        break;
      default:
        break;
    }
  }
  s.unclosed = in_string || !stack.empty();
  return s;
}

// ---------------------------------------------------------------------------
// Typed access that never throws: wrong types read as absent.

const json* Member(const json& obj, const char* key) {
  if (!obj.is_object()) return nullptr;
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return nullptr;
  return &*it;
}

std::optional<double> Double(const json& obj, const char* key) {
  const json* v = Member(obj, key);
  if (!v) return std::nullopt;
  double d = 0;
  if (v->is_number()) {
    d = v->get<double>();
  } else if (v->is_string()) {
    // "nan" (and numbers some writers quote)
    const std::string& s = v->get_ref<const std::string&>();
    auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), d);
    if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  } else {
    return std::nullopt;
  }
  if (!std::isfinite(d)) return std::nullopt;
  return d;
}

std::optional<int64_t> Int(const json& obj, const char* key) {
  const json* v = Member(obj, key);
  if (!v) return std::nullopt;
  if (v->is_number_unsigned()) {
    uint64_t u = v->get<uint64_t>();
    if (u > static_cast<uint64_t>(INT64_MAX)) return std::nullopt;
    return static_cast<int64_t>(u);
  }
  if (v->is_number_integer()) return v->get<int64_t>();
  if (v->is_number_float() || v->is_string()) {
    // A double ("nwrong": 0.000000) or a padded string ("root": "    -1").
    if (v->is_string()) {
      std::string s = v->get<std::string>();
      size_t b = s.find_first_not_of(" \t");
      if (b == std::string::npos) return std::nullopt;
      s = s.substr(b, s.find_last_not_of(" \t") - b + 1);
      int64_t n = 0;
      auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), n);
      if (ec == std::errc() && p == s.data() + s.size()) return n;
    }
    auto d = Double(obj, key);
    if (!d || *d < -9.2e18 || *d > 9.2e18 || std::floor(*d) != *d) return std::nullopt;
    return static_cast<int64_t>(*d);
  }
  return std::nullopt;
}

std::optional<int> SmallInt(const json& obj, const char* key) {
  auto v = Int(obj, key);
  if (!v || *v < INT32_MIN || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

std::optional<std::string> String(const json& obj, const char* key) {
  const json* v = Member(obj, key);
  if (!v || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// nccl-tests writes booleans as the strings "true"/"false".
std::optional<bool> Bool(const json& obj, const char* key) {
  const json* v = Member(obj, key);
  if (!v) return std::nullopt;
  if (v->is_boolean()) return v->get<bool>();
  if (v->is_string()) {
    if (*v == "true") return true;
    if (*v == "false") return false;
  }
  return std::nullopt;
}

std::optional<Measurement> ReadMeasurement(const json& row, const char* key,
                                           const char* per_iter_key) {
  const json* m = Member(row, key);
  const json* it = Member(row, per_iter_key);
  if ((!m || !m->is_object()) && (!it || !it->is_object())) return std::nullopt;
  Measurement out;
  if (m && m->is_object()) {
    out.time_us = Double(*m, "time");
    if (!out.time_us) out.time_us = Double(*m, "cpu_time");
    out.algbw_gbps = Double(*m, "alg_bw");
    out.busbw_gbps = Double(*m, "bus_bw");
    auto wrong = Double(*m, "nwrong");  // null when not checked (-c 0)
    if (wrong && *wrong >= 0 && *wrong < 9.2e18 && std::floor(*wrong) == *wrong) {
      out.wrong = static_cast<int64_t>(*wrong);
    }
  }
  if (it && it->is_object()) {
    out.iter_min_us = Double(*it, "min_us");
    out.iter_max_us = Double(*it, "max_us");
    out.iter_p50_us = Double(*it, "p50_us");
    out.iter_p99_us = Double(*it, "p99_us");
    out.iter_cv_pct = Double(*it, "cv_pct");
  }
  return out;
}

bool KeepEnv(std::string_view entry) {
  for (std::string_view p : {"NCCL_", "UCX_", "OMPI_", "SLURM_", "CUDA_"}) {
    if (entry.substr(0, p.size()) == p) return true;
  }
  return false;
}

TestTable ToTable(const json& doc, const std::vector<int>& result_lines, int* rows_skipped) {
  TestTable t;
  if (const json* args = Member(doc, "args"); args && args->is_array()) {
    for (const json& a : *args) {
      if (a.is_string()) t.command_args.push_back(a.get<std::string>());
    }
  }
  if (!t.command_args.empty()) {
    std::string_view prog = t.command_args[0];
    size_t slash = prog.rfind('/');
    if (slash != std::string_view::npos) prog = prog.substr(slash + 1);
    t.collective = CanonicalCollective(prog);
  }
  if (const json* env = Member(doc, "env"); env && env->is_array()) {
    for (const json& e : *env) {
      if (!e.is_string()) continue;
      const std::string& s = e.get_ref<const std::string&>();
      size_t eq = s.find('=');
      if (eq == std::string::npos || !KeepEnv(s)) continue;
      t.environment[s.substr(0, eq)] = s.substr(eq + 1);
    }
  }
  t.started_at = String(doc, "start_time");
  t.nccl_version_code = SmallInt(doc, "nccl_version");

  if (const json* cfg = Member(doc, "config"); cfg && cfg->is_object()) {
    static constexpr std::pair<const char*, std::optional<int> TestParameters::*> kInts[] = {
        {"nthreads", &TestParameters::threads},
        {"ngpus", &TestParameters::gpus_per_thread},
        {"warmup_iters", &TestParameters::warmup_iters},
        {"iterations", &TestParameters::iters},
        {"aggregated_iterations", &TestParameters::agg_iters},
        {"validation", &TestParameters::validation},
        {"graph", &TestParameters::graph},
        {"unalign", &TestParameters::unalign},
    };
    static constexpr std::pair<const char*, std::optional<int64_t> TestParameters::*> kInt64s[] = {
        {"minimum_bytes", &TestParameters::min_bytes},
        {"maximum_bytes", &TestParameters::max_bytes},
        {"step_factor", &TestParameters::step_factor},
        {"step_bytes", &TestParameters::step_bytes},
    };
    for (const auto& [key, field] : kInts) t.parameters.*field = SmallInt(*cfg, key);
    for (const auto& [key, field] : kInt64s) t.parameters.*field = Int(*cfg, key);
    if (const json* devs = Member(*cfg, "devices"); devs && devs->is_array()) {
      for (const json& d : *devs) {
        if (!d.is_object()) continue;
        RankDevice rd;
        rd.rank = SmallInt(d, "rank").value_or(static_cast<int>(t.devices.size()));
        rd.group = SmallInt(d, "group");
        rd.pid = Int(d, "pid");
        rd.host = String(d, "hostname").value_or("");
        rd.device = SmallInt(d, "device");
        rd.bus_id = String(d, "device_hex").value_or("");
        rd.gpu_model = String(d, "device_info").value_or("");
        t.devices.push_back(std::move(rd));
        if (!t.devices.back().host.empty()) {
          bool seen = false;
          for (const auto& h : t.hosts) seen |= h == t.devices.back().host;
          if (!seen) t.hosts.push_back(t.devices.back().host);
        }
      }
    }
    if (!t.devices.empty()) t.ranks = static_cast<int>(t.devices.size());
  }

  const json* results = Member(doc, "results");
  if (results && results->is_array()) {
    size_t index = 0;
    for (const json& r : *results) {
      int line = index < result_lines.size() ? result_lines[index] : 0;
      ++index;
      auto size = Int(r, "size");
      if (!r.is_object() || !size || *size < 0) {
        ++*rows_skipped;
        continue;
      }
      SizeRow row;
      row.size_bytes = *size;
      row.count = Int(r, "count");
      row.type = String(r, "type");
      row.redop = String(r, "redop");
      // "none" placeholder; hypercube writes "" (as it prints a blank op).
      if (row.redop == "none" || row.redop == "") row.redop.reset();
      if (auto root = Int(r, "root"); root && *root >= INT32_MIN && *root <= INT32_MAX) {
        row.root = static_cast<int>(*root);
      }
      row.oop = ReadMeasurement(r, "out_of_place", "out_of_place_per_iter");
      row.ip = ReadMeasurement(r, "in_place", "in_place_per_iter");
      row.line = line;
      t.rows.push_back(std::move(row));
    }
  }
  const json* oob = Member(doc, "out_of_bounds");
  const json* avg = Member(doc, "average_bus_bandwidth");
  if (oob) {
    t.oob_count = Int(*oob, "count");
    t.oob_ok = Bool(*oob, "okay");
  }
  if (avg) t.avg_busbw = Double(*avg, "bandwidth");
  t.complete = results && results->is_array() && oob && oob->is_object() && avg && avg->is_object();
  return t;
}

}  // namespace

std::vector<TestTable> ParseNcclTestsJson(std::string_view text, std::vector<ParseError>* errors) {
  auto error = [&](int line, std::string message) {
    if (errors) errors->push_back(ParseError{line, std::move(message)});
  };
  try {
    Scan scan = ScanJson(text);
    json doc;
    bool truncated = false;
    const std::string& clean = scan.sanitized;
    // The line of the last character written (a final newline starts none).
    size_t last_char = clean.find_last_not_of(" \t\r\n");
    int end_line = LineAt(clean, last_char == std::string::npos ? 0 : last_char);
    try {
      doc = json::parse(scan.sanitized);
    } catch (const json::parse_error& e) {
      // An error past the last byte means the text simply stops: a report cut
      // short. Anything else is not a report.
      if (e.byte <= clean.size() || !scan.unclosed || scan.cut_points.empty()) {
        error(LineAt(clean, e.byte == 0 ? 0 : e.byte - 1),
              std::string("not valid JSON: ") + e.what());
        return {};
      }
      truncated = true;
      const CutPoint& cut = scan.cut_points.back();
      std::string repaired = clean.substr(0, cut.pos) + cut.closers;
      doc = json::parse(repaired, nullptr, /*allow_exceptions=*/false);
      if (doc.is_discarded()) {
        error(end_line, "JSON report ends early and could not be recovered");
        return {};
      }
    }
    if (!doc.is_object() ||
        (!doc.contains("results") && !doc.contains("config") && !doc.contains("version"))) {
      error(1, "JSON is not an nccl-tests -J report (no version/config/results)");
      return {};
    }
    int rows_skipped = 0;
    TestTable t = ToTable(doc, scan.result_lines, &rows_skipped);
    if (rows_skipped > 0) {
      error(0, std::to_string(rows_skipped) + " result(s) without a valid \"size\" skipped");
    }
    t.first_line = 1;
    t.last_line = end_line;
    if (truncated) {
      t.complete = false;
      error(end_line, "JSON report ends early at line " + std::to_string(end_line) +
                          " (job killed?); recovered " + std::to_string(t.rows.size()) +
                          " complete result(s)");
    }
    std::vector<TestTable> out;
    out.push_back(std::move(t));
    return out;
  } catch (const std::exception& e) {
    // nlohmann type errors should be impossible given the checks above; a
    // parser must still never throw.
    error(0, std::string("internal error while reading JSON report: ") + e.what());
    return {};
  }
}

}  // namespace fabtrack
