// Inspector's JSON-lines output: one record object per line.
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
#include "collector/parse/json_non_finite.h"
#include "core/bus_bandwidth.h"
#include "core/clock.h"
#include "core/json_instances.h"

namespace fabtrack::inspector_internal {
namespace {

using nlohmann::json;

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

}  // namespace

InspectorParseResult ParseJsonLines(std::string_view text, std::string_view file_name) {
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

}  // namespace fabtrack::inspector_internal
