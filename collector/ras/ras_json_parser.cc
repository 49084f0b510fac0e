// The JSON report of NCCL's RAS (SET FORMAT json, NCCL >= 2.28.7): a dump of
// every communicator's ranks with their collective counts, and the ranks RAS
// could not reach. NCCL 2.28.7-2.28.9 write a missing rank's "nvml_dev"
// without the comma before "status" (fixed in 2.29); that one lost comma is
// put back so those reports are read whole.

#include <cstdint>
#include <limits>
#include <optional>

#include "collector/ras/ras_report.h"
#include "core/json_instances.h"
#include "core/pattern.h"

namespace fabtrack::ras {
namespace {

// Rank entries (present and missing, over all communicators) read from one
// report at most. A report holds each rank once per communicator it is in
// (a 131,072-rank job in 16 communicators of that size: 2^21); past this a
// reply is not a RAS report but something that would fill memory with
// rank objects ("{}," is 3 bytes of text and a ~100-byte JsonRank). Real
// reports reach the reply cap (ras_client.h, ~990,000 entries as NCCL
// prints them) first.
constexpr size_t kMaxRankEntries = size_t{1} << 21;

// Line number (1-based) of byte offset `at` in `text`.
size_t LineOf(std::string_view text, size_t at) {
  at = std::min(at, text.size());
  size_t n = 1;
  for (size_t i = 0; i < at; ++i) n += text[i] == '\n';
  return n;
}

// NCCL 2.28.7-2.28.9's missing-rank object: `"nvml_dev": N` then a newline
// and `"status"` with no comma. Only that pair is touched, so no other
// invalid JSON is made valid by accident.
std::string RestoreLostComma(std::string_view text) {
  static const Pattern kLost(R"(("nvml_dev": *-?\d+)(\s*\n\s*"status"))");
  return kLost.ReplaceAll(text, "$1,$2");
}

// One scalar of the report as the SAX parser hands it over, converted as
// nlohmann's get<T>() would convert a DOM value (numbers and booleans to
// numbers, only booleans to bool, only strings to string); anything else
// (null, an object or array where a scalar belongs) is the field's default.
struct Scalar {
  enum Kind { kNone, kInteger, kUnsigned, kFloat, kBool, kString } kind = kNone;
  int64_t i = 0;
  uint64_t u = 0;
  double d = 0;
  bool b = false;
  const std::string* s = nullptr;

  bool IsNumber() const { return kind == kInteger || kind == kUnsigned || kind == kFloat; }
  template <typename T>
  T Number(T fallback) const {
    switch (kind) {
      case kInteger:
        return static_cast<T>(i);
      case kUnsigned:
        return static_cast<T>(u);
      case kFloat:
        // Clamped: a double past the type's range is undefined to cast.
        if (!(d == d)) return fallback;
        if (d >= static_cast<double>(std::numeric_limits<T>::max())) {
          return std::numeric_limits<T>::max();
        }
        if (d <= static_cast<double>(std::numeric_limits<T>::lowest())) {
          return std::numeric_limits<T>::lowest();
        }
        return static_cast<T>(d);
      case kBool:
        return static_cast<T>(b);
      default:
        return fallback;
    }
  }
  bool Bool(bool fallback) const { return kind == kBool ? b : fallback; }
  std::string String(const std::string& fallback) const { return kind == kString ? *s : fallback; }
};

// The report read as the parser walks it (json::sax_parse), straight into
// the Report: no DOM of the reply is built (a DOM of a 131,072-rank report,
// 71 MB of text, is several times that). Where the report's objects nest:
// root {nccl_version, ras {timeouts_count, collection_time_sec},
// communicators [ {hash, size, ranks [ {rank, host, pid, cuda_dev, nvml_dev,
// status {...}, collective_counts {op: n}} ], missing_ranks [ {..., status
// {unresponsive, considered_dead}} ]} ]}; everything else is skipped. As
// in a DOM read, a key given twice keeps its last value.
class ReportReader : public nlohmann::json_sax<nlohmann::json> {
 public:
  explicit ReportReader(Report* r) : r_(r) {}

  enum Frame {
    kRoot,
    kRas,
    kComms,
    kComm,
    kRanks,
    kRank,
    kRankStatus,
    kCounts,
    kMissing,
    kMissingRank,
    kMissingStatus,
    kSkip
  };

  bool null() override { return Value(Scalar{}); }
  bool boolean(bool v) override {
    Scalar s;
    s.kind = Scalar::kBool;
    s.b = v;
    return Value(s);
  }
  bool number_integer(number_integer_t v) override {
    Scalar s;
    s.kind = Scalar::kInteger;
    s.i = v;
    return Value(s);
  }
  bool number_unsigned(number_unsigned_t v) override {
    Scalar s;
    s.kind = Scalar::kUnsigned;
    s.u = v;
    return Value(s);
  }
  bool number_float(number_float_t v, const string_t&) override {
    Scalar s;
    s.kind = Scalar::kFloat;
    s.d = v;
    return Value(s);
  }
  bool string(string_t& v) override {
    Scalar s;
    s.kind = Scalar::kString;
    s.s = &v;
    return Value(s);
  }
  bool binary(binary_t&) override { return Value(Scalar{}); }

  bool start_object(std::size_t) override {
    if (stack_.empty()) {
      root_object_ = true;
      stack_.push_back(kRoot);
      return true;
    }
    Frame top = stack_.back();
    Frame next = kSkip;
    if (top == kRoot && key_ == "ras") {
      next = kRas;
    } else if (top == kComms) {
      r_->communicators.emplace_back();
      next = kComm;
    } else if (top == kRanks || top == kMissing) {
      if (++entries_ > kMaxRankEntries) {
        too_many_ = true;
        return false;
      }
      if (top == kRanks) {
        r_->communicators.back().ranks.emplace_back();
        next = kRank;
      } else {
        r_->communicators.back().missing_ranks.emplace_back();
        next = kMissingRank;
      }
    } else if (top == kRank && key_ == "status") {
      JsonRank& k = r_->communicators.back().ranks.back();
      k.init_state = k.async_error = 0;
      k.finalize_called = k.destroy_flag = k.abort_flag = false;
      next = kRankStatus;
    } else if (top == kRank && key_ == "collective_counts") {
      std::vector<JsonRank>& ranks = r_->communicators.back().ranks;
      ranks.back().collective_counts.clear();
      // As many as the rank before (NCCL writes the same operations for
      // every rank): one allocation, not a vector grown 1, 2, 4, 8.
      if (ranks.size() > 1) {
        ranks.back().collective_counts.reserve(ranks[ranks.size() - 2].collective_counts.size());
      }
      next = kCounts;
    } else if (top == kMissingRank && key_ == "status") {
      JsonMissingRank& m = r_->communicators.back().missing_ranks.back();
      m.unresponsive = m.considered_dead = false;
      next = kMissingStatus;
    } else {
      Value(Scalar{});  // an object where a scalar belongs: the default
    }
    if (top == kRoot && key_ == "communicators") comms_array_ = false;
    stack_.push_back(next);
    return true;
  }
  bool end_object() override {
    stack_.pop_back();
    return true;
  }
  bool start_array(std::size_t) override {
    Frame top = stack_.empty() ? kSkip : stack_.back();
    Frame next = kSkip;
    if (top == kRoot && key_ == "communicators") {
      comms_array_ = true;
      r_->communicators.clear();
      next = kComms;
    } else if (top == kComm && key_ == "ranks") {
      r_->communicators.back().ranks.clear();
      next = kRanks;
    } else if (top == kComm && key_ == "missing_ranks") {
      r_->communicators.back().missing_ranks.clear();
      next = kMissing;
    } else if (!stack_.empty()) {
      Value(Scalar{});
      if (top == kRoot && key_ == "communicators") comms_array_ = false;
    }
    stack_.push_back(next);
    return true;
  }
  bool end_array() override {
    stack_.pop_back();
    return true;
  }
  bool key(string_t& k) override {
    // Keys under skipped values are never looked at.
    if (stack_.back() != kSkip) key_ = k;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception&) override {
    error_at_ = position;
    return false;
  }

  bool root_object() const { return root_object_; }
  bool comms_array() const { return comms_array_; }
  bool too_many() const { return too_many_; }
  std::optional<size_t> error_at() const { return error_at_; }

 private:
  bool Value(const Scalar& v) {
    if (stack_.empty()) return true;  // the whole document is a scalar
    const std::string& k = key_;
    switch (stack_.back()) {
      case kRoot:
        if (k == "nccl_version") r_->nccl_version = v.String("");
        if (k == "communicators") comms_array_ = false;
        break;
      case kRas:
        if (k == "timeouts_count") r_->timeouts = v.Number<int>(0);
        if (k == "collection_time_sec") r_->collection_s = v.Number<double>(0);
        break;
      case kComm: {
        JsonCommunicator& c = r_->communicators.back();
        if (k == "hash") c.hash = v.String("");
        if (k == "size") c.size = v.Number<int>(0);
        break;
      }
      case kRank:
        Identity(k, v, &r_->communicators.back().ranks.back());
        break;
      case kMissingRank:
        Identity(k, v, &r_->communicators.back().missing_ranks.back());
        break;
      case kRankStatus: {
        JsonRank& x = r_->communicators.back().ranks.back();
        if (k == "init_state") x.init_state = v.Number<int>(0);
        if (k == "async_error") x.async_error = v.Number<int>(0);
        if (k == "finalize_called") x.finalize_called = v.Bool(false);
        if (k == "destroy_flag") x.destroy_flag = v.Bool(false);
        if (k == "abort_flag") x.abort_flag = v.Bool(false);
        break;
      }
      case kMissingStatus: {
        JsonMissingRank& x = r_->communicators.back().missing_ranks.back();
        if (k == "unresponsive") x.unresponsive = v.Bool(false);
        if (k == "considered_dead") x.considered_dead = v.Bool(false);
        break;
      }
      case kCounts:
        // Integers only, as written (a DOM read kept integer values only).
        if (v.kind == Scalar::kInteger || v.kind == Scalar::kUnsigned) {
          r_->communicators.back().ranks.back().collective_counts.emplace_back(
              k, v.Number<int64_t>(0));
        }
        break;
      default:
        break;
    }
    return true;
  }

  template <typename RankLike>
  static void Identity(const std::string& k, const Scalar& v, RankLike* x) {
    if (k == "rank") x->rank = v.Number<int>(-1);
    if (k == "host") x->host = v.String("");
    if (k == "pid") x->pid = v.Number<int64_t>(0);
    if (k == "cuda_dev") x->cuda_dev = v.Number<int>(-1);
    if (k == "nvml_dev") x->nvml_dev = v.Number<int>(-1);
  }

  Report* r_;
  std::vector<Frame> stack_;
  std::string key_;
  bool root_object_ = false;
  bool comms_array_ = false;
  bool too_many_ = false;
  size_t entries_ = 0;
  std::optional<size_t> error_at_;
};

// One pass over `text` into a fresh report; false where the JSON is invalid
// (`*error_at`: the parser's byte offset) or holds too many ranks.
bool Read(std::string_view text, Report* r, size_t* error_at, bool* too_many) {
  *r = Report{};
  r->format = "json";
  ReportReader reader(r);
  bool ok = nlohmann::json::sax_parse(text.data(), text.data() + text.size(), &reader);
  *too_many = reader.too_many();
  if (!ok) {
    *error_at = reader.error_at().value_or(text.size());
    return false;
  }
  if (!reader.root_object()) {
    r->problems.push_back("line 1: the JSON report is not an object");
  } else if (!reader.comms_array()) {
    r->communicators.clear();
    r->problems.push_back("no \"communicators\" array");
  }
  return true;
}

}  // namespace

Report ParseRasJson(std::string_view text) {
  Report r;
  size_t error_at = 0;
  bool too_many = false;
  bool ok = Read(text, &r, &error_at, &too_many);
  if (!ok && !too_many) {
    std::string repaired = RestoreLostComma(text);
    if (repaired != text) {
      size_t ignored = 0;
      Report again;
      if (Read(repaired, &again, &ignored, &too_many)) {
        r = std::move(again);
        r.json_repaired = true;
        ok = true;
      }
    }
  }
  if (too_many) {
    r = Report{};
    r.format = "json";
    r.problems.push_back("more than " + std::to_string(kMaxRankEntries) +
                         " rank entries: not read as a RAS report");
    return r;
  }
  if (!ok) {
    // Say where: the parser's byte offset, as a line.
    r = Report{};
    r.format = "json";
    bool at_end = error_at >= text.size();
    r.problems.push_back(
        "line " + std::to_string(LineOf(text, error_at ? error_at - 1 : 0)) +
        (at_end ? ": the reply ends before the JSON report does" : ": not valid JSON"));
    return r;
  }
  r.complete = r.problems.empty();
  return r;
}

}  // namespace fabtrack::ras
