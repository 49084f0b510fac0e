#include "core/run_record_json.h"

#include <limits>
#include <string_view>
#include <vector>

#include "core/json_optional.h"

namespace fabtrack {
namespace {

using nlohmann::json;

// Whether a JSON integer fits T (converting one that does not is undefined
// behaviour for floats and wraps for integers).
template <typename T>
bool IntegerFits(const json& v) {
  if (v.is_number_unsigned()) {
    return v.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<T>::max());
  }
  const int64_t x = v.get<int64_t>();
  if constexpr (std::is_unsigned_v<T>) {
    return x >= 0;
  } else {
    return x >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
           x <= static_cast<int64_t>(std::numeric_limits<T>::max());
  }
}

// Reading: every accessor checks the type and names the field on mismatch.
class Reader {
 public:
  explicit Reader(std::string* error) : error_(error) {}
  bool ok() const { return ok_; }

  template <typename T>
  void Req(const json& j, const char* key, T* out) {
    if (!ok_) return;
    if (!j.is_object() || !j.contains(key) || j[key].is_null()) return Fail(key, "missing");
    Read(j[key], key, out);
  }
  template <typename T>
  void Opt(const json& j, const char* key, std::optional<T>* out) {
    if (!ok_ || !j.is_object() || !j.contains(key) || j[key].is_null()) return;
    T value{};
    Read(j[key], key, &value);
    if (ok_) *out = value;
  }
  // A member with a default (0, false): read when present, else left as is.
  template <typename T>
  void Def(const json& j, const char* key, T* out) {
    if (!ok_ || !j.is_object() || !j.contains(key) || j[key].is_null()) return;
    Read(j[key], key, out);
  }
  void Fail(const std::string& key, const std::string& what) {
    if (ok_) *error_ = "field \"" + key + "\": " + what;
    ok_ = false;
  }

 private:
  template <typename T>
  void Read(const json& v, const char* key, T* out) {
    try {
      if constexpr (std::is_same_v<T, bool>) {
        if (!v.is_boolean()) return Fail(key, "expected true/false");
      } else if constexpr (std::is_integral_v<T>) {
        // A float or an out-of-range integer converted to T is undefined
        // behaviour (UBSan found it): check before converting.
        if (!v.is_number_integer()) return Fail(key, "expected an integer");
        if (!IntegerFits<T>(v)) return Fail(key, "integer out of range");
      } else if constexpr (std::is_arithmetic_v<T>) {
        if (!v.is_number()) return Fail(key, "expected a number");
      } else if constexpr (std::is_same_v<T, std::string>) {
        if (!v.is_string()) return Fail(key, "expected a string");
      }
      *out = v.get<T>();
    } catch (const std::exception& e) {
      Fail(key, e.what());
    }
  }
  std::string* error_;
  bool ok_ = true;
};

// Writes each field as a member of `out`; an absent optional as null.
struct FieldWriter {
  json& out;
  template <typename T>
  void Req(const char* key, const T& value) const {
    out[key] = value;
  }
  template <typename T>
  void Opt(const char* key, const std::optional<T>& value) const {
    out[key] = OptionalJson(value);
  }
  template <typename T>
  void Def(const char* key, const T& value) const {
    out[key] = value;
  }
};

// Reads each field of `in` with the Reader's type checks: Req must be there,
// Opt and Def may be absent or null.
struct FieldReader {
  Reader& r;
  const json& in;
  template <typename T>
  void Req(const char* key, T& value) const {
    r.Req(in, key, &value);
  }
  template <typename T>
  void Opt(const char* key, std::optional<T>& value) const {
    r.Opt(in, key, &value);
  }
  template <typename T>
  void Def(const char* key, T& value) const {
    r.Def(in, key, &value);
  }
};

// The record's fields, each named once: the writer and the reader walk the
// same list (F is FieldWriter or FieldReader, S const or not), so a field is
// never written under one name and read under another, or forgotten by one.
template <typename S, typename F>
void MeasurementFields(S& m, const F& f) {
  f.Opt("time_us", m.time_us);
  f.Opt("algbw", m.algbw_gbps);
  f.Opt("busbw", m.busbw_gbps);
  f.Opt("wrong", m.wrong);
  f.Opt("max_error", m.max_error);
}

template <typename S, typename F>
void IterationFields(S& m, const F& f) {
  f.Opt("min_us", m.iter_min_us);
  f.Opt("max_us", m.iter_max_us);
  f.Opt("p50_us", m.iter_p50_us);
  f.Opt("p99_us", m.iter_p99_us);
  f.Opt("cv_pct", m.iter_cv_pct);
}

template <typename S, typename F>
void SizeRowFields(S& row, const F& f) {
  f.Req("size_bytes", row.size_bytes);
  f.Opt("count", row.count);
  f.Opt("type", row.type);
  f.Opt("redop", row.redop);
  f.Opt("root", row.root);
  f.Def("line", row.line);
}

template <typename S, typename F>
void LatencyFields(S& l, const F& f) {
  f.Opt("mean_us", l.mean_us);
  f.Opt("p50_us", l.p50_us);
  f.Opt("p90_us", l.p90_us);
  f.Opt("p99_us", l.p99_us);
  f.Opt("min_us", l.min_us);
  f.Opt("max_us", l.max_us);
  f.Opt("stddev_us", l.stddev_us);
  f.Opt("cv", l.cv);
  f.Opt("ip_p50_us", l.ip_p50_us);
  f.Opt("ip_p99_us", l.ip_p99_us);
  f.Opt("ip_cv", l.ip_cv);
  f.Opt("straggler_host", l.straggler_host);
  f.Opt("straggler_rank", l.straggler_rank);
  f.Opt("straggler_excess_us", l.straggler_excess_us);
}

template <typename S, typename F>
void RankTimingFields(S& t, const F& f) {
  f.Req("row_index", t.row_index);
  f.Req("in_place", t.in_place);
  f.Req("rank", t.rank);
  f.Opt("host", t.host);
  f.Opt("mean_us", t.mean_us);
  f.Opt("p50_us", t.p50_us);
  f.Opt("p99_us", t.p99_us);
  f.Opt("max_us", t.max_us);
  f.Opt("lateness_us", t.lateness_us);
}

template <typename S, typename F>
void LinkProbeFields(S& p, const F& f) {
  f.Req("host_a", p.host_a);
  f.Req("host_b", p.host_b);
  f.Req("bytes", p.bytes);
  f.Req("seconds", p.seconds);
  f.Req("gbps", p.gbps);
}

template <typename S, typename F>
void RankDeviceFields(S& d, const F& f) {
  f.Req("rank", d.rank);
  f.Opt("group", d.group);
  f.Req("host", d.host);
  f.Opt("pid", d.pid);
  f.Opt("device", d.device);
  f.Def("bus_id", d.bus_id);
  f.Def("gpu_model", d.gpu_model);
}

// Transport evidence from NCCL logs: absent from harness files (the harness
// records it at the end), present when a spooled ingest is kept.
template <typename S, typename F>
void NetDeviceFields(S& d, const F& f) {
  f.Req("host", d.host);
  f.Req("index", d.index);
  f.Req("name", d.name);
  f.Opt("port", d.port);
  f.Req("link", d.link);
  f.Req("sharp", d.sharp);
}

template <typename S, typename F>
void LogEventFields(S& m, const F& f) {
  f.Req("host", m.host);
  f.Req("level", m.level);
  f.Req("text", m.text);
  f.Req("line", m.line);
}

template <typename S, typename F>
void ChannelFields(S& c, const F& f) {
  f.Req("host", c.host);
  f.Opt("pid", c.pid);
  f.Opt("cuda_device", c.cuda_device);
  f.Req("channel", c.channel);
  f.Opt("conn_index", c.conn_index);
  f.Req("from_rank", c.from_rank);
  f.Req("to_rank", c.to_rank);
  f.Req("from_bus_id", c.from_bus_id);
  f.Req("to_bus_id", c.to_bus_id);
  f.Opt("direction", c.direction);
  f.Req("family", c.family);
  f.Req("detail", c.detail);
  f.Opt("nic_index", c.nic_index);
  f.Req("gdrdma", c.gdrdma);
  f.Req("is_ring_line", c.is_ring_line);
  f.Req("line", c.line);
}

template <typename S, typename F>
void StepFields(S& s, const F& f) {
  f.Req("model_params", s.model_params);
  f.Req("grad_dtype", s.grad_dtype);
  f.Req("grad_bytes", s.grad_bytes);
  f.Req("bucket_bytes", s.bucket_bytes);
  f.Req("buckets", s.buckets);
  f.Req("forward_ms", s.forward_ms);
  f.Req("backward_ms", s.backward_ms);
  f.Req("steps", s.steps);
  f.Req("step_ms_p50", s.step_ms_p50);
  f.Req("step_ms_p90", s.step_ms_p90);
  f.Req("step_ms_p99", s.step_ms_p99);
  f.Req("step_ms_max", s.step_ms_max);
  f.Req("step_ms_mean", s.step_ms_mean);
  f.Req("compute_ms_p50", s.compute_ms_p50);
  f.Req("exposed_ms_p50", s.exposed_ms_p50);
  f.Req("exposed_ms_p99", s.exposed_ms_p99);
  f.Req("exposed_ms_mean", s.exposed_ms_mean);
  f.Req("idle_share_p50", s.idle_share_p50);
  f.Req("idle_share_mean", s.idle_share_mean);
}

// The run's own fields but its status (an enum written by name).
template <typename S, typename F>
void RunFields(S& run, const F& f) {
  f.Req("cluster", run.cluster);
  f.Req("started_at", run.started_at);
  f.Opt("ended_at", run.ended_at);
  f.Req("source", run.source);
  f.Opt("backend", run.backend);
  f.Opt("collective", run.collective);
  f.Opt("dtype", run.dtype);
  f.Opt("redop", run.redop);
  f.Opt("ranks", run.ranks);
  f.Opt("nodes", run.nodes);
  f.Opt("gpus_per_node", run.gpus_per_node);
  f.Opt("ranks_per_node", run.ranks_per_node);
  f.Def("hosts", run.hosts);
  f.Opt("gpu_model", run.gpu_model);
  f.Opt("nccl_version", run.nccl_version);
  f.Opt("cuda_version", run.cuda_version);
  f.Opt("driver_version", run.driver_version);
  f.Opt("mpi_version", run.mpi_version);
  f.Opt("network", run.network);
  f.Def("transports", run.transports);
  f.Opt("gdrdma", run.gdrdma);
  f.Opt("command_line", run.command_line);
  f.Def("nccl_env", run.nccl_env);
  f.Def("node_facts", run.node_facts);
  f.Opt("slurm_job_id", run.slurm_job_id);
  f.Opt("slurm_step_id", run.slurm_step_id);
  f.Def("tags", run.tags);
  f.Opt("sweep_id", run.sweep_id);
  f.Def("parameters", run.parameters);
  f.Opt("warmup_iters", run.warmup_iters);
  f.Opt("iters", run.iters);
  f.Opt("avg_busbw_gbps", run.avg_busbw_gbps);
  f.Opt("oob_ok", run.oob_ok);
  f.Opt("oob_count", run.oob_count);
  f.Opt("link_straggler_host", run.link_straggler_host);
  f.Opt("machines", run.machines);
  f.Opt("max_ranks_per_machine", run.max_ranks_per_machine);
  f.Opt("cpus_per_machine", run.cpus_per_machine);
  f.Req("content_hash", run.content_hash);
  f.Def("table_index", run.table_index);
  f.Opt("source_file", run.source_file);
  f.Opt("nccl_tests_version", run.nccl_tests_version);
}

// One JSON object of the fields a *Fields function lists.
template <typename S, typename Fields>
json ObjectJson(const S& s, Fields fields) {
  json out = json::object();
  fields(s, FieldWriter{out});
  return out;
}

json MeasurementJson(const std::optional<Measurement>& m) {
  if (!m) return nullptr;
  json j = ObjectJson(*m, MeasurementFields<const Measurement, FieldWriter>);
  // The per-iteration statistics only when the producer had them: a spooled
  // 300k-row ingest of plain tables stays the size it was.
  if (m->iter_min_us || m->iter_max_us || m->iter_p50_us || m->iter_p99_us || m->iter_cv_pct) {
    j["iter"] = ObjectJson(*m, IterationFields<const Measurement, FieldWriter>);
  }
  return j;
}

json StepJson(const std::optional<StepSummary>& step) {
  if (!step) return nullptr;
  return ObjectJson(*step, StepFields<const StepSummary, FieldWriter>);
}

json ResultJson(const ResultRow& r) {
  json j = ObjectJson(r.row, SizeRowFields<const SizeRow, FieldWriter>);
  j["oop"] = MeasurementJson(r.row.oop);
  j["ip"] = MeasurementJson(r.row.ip);
  j["latency"] = ObjectJson(r.latency, LatencyFields<const LatencySummary, FieldWriter>);
  return j;
}

// An element of a list that is just its fields: the object of its *Fields list.
template <typename T, void (*Fields)(const T&, const FieldWriter&)>
json FieldsJson(const T& item) {
  return ObjectJson(item, Fields);
}

constexpr auto RankTimingJson = FieldsJson<RankTiming, RankTimingFields>;
constexpr auto LinkProbeJson = FieldsJson<LinkProbeResult, LinkProbeFields>;
constexpr auto RankDeviceJson = FieldsJson<RankDevice, RankDeviceFields>;
constexpr auto NetDeviceJson = FieldsJson<NetDevice, NetDeviceFields>;
constexpr auto LogEventJson = FieldsJson<LogMessage, LogEventFields>;
constexpr auto ChannelJson = FieldsJson<ChannelObservation, ChannelFields>;

json RunFieldsJson(const RunRecord& run) {
  json j = ObjectJson(run, RunFields<const RunRecord, FieldWriter>);
  j["status"] = RunStatusName(run.status);
  return j;
}

std::optional<Measurement> ReadMeasurement(Reader& r, const json& j) {
  if (j.is_null()) return std::nullopt;
  Measurement m;
  MeasurementFields(m, FieldReader{r, j});
  if (j.is_object() && j.contains("iter")) IterationFields(m, FieldReader{r, j["iter"]});
  return m;
}

}  // namespace

namespace {}  // namespace

namespace {

// One element of each of the record's lists, and the run's own fields: what
// the whole document and the streaming writer share.
json StepSampleJson(const StepSample& s) { return {s.step, s.step_ms, s.compute_ms, s.exposed_ms}; }

json LatencySampleJson(const LatencySample& s) {
  return {s.row_index, s.in_place, s.iteration, s.latency_us};
}

template <typename T>
json ArrayJson(const std::vector<T>& items, json (*element)(const T&)) {
  json out = json::array();
  for (const T& item : items) out.push_back(element(item));
  return out;
}

// Appends `"key":[...]` with one element's document alive at a time.
template <typename T>
void AppendArray(const char* key, const std::vector<T>& items, json (*element)(const T&),
                 std::string* out) {
  *out += '"';
  *out += key;
  *out += "\":[";
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) *out += ',';
    *out += element(items[i]).dump();
  }
  *out += ']';
}

void AppendMember(const char* key, const json& value, std::string* out) {
  *out += '"';
  *out += key;
  *out += "\":";
  *out += value.dump();
}

}  // namespace

nlohmann::json RunRecordToJson(const RunRecord& run) {
  return {{"format", kRunFileFormat},
          {"version", kRunFileVersion},
          {"run", RunFieldsJson(run)},
          {"net_devices", ArrayJson(run.net_devices, NetDeviceJson)},
          {"channels", ArrayJson(run.channels, ChannelJson)},
          {"ranks", ArrayJson(run.rank_devices, RankDeviceJson)},
          {"results", ArrayJson(run.results, ResultJson)},
          {"latency_samples", ArrayJson(run.latency_samples, LatencySampleJson)},
          {"rank_timings", ArrayJson(run.rank_timings, RankTimingJson)},
          {"link_probes", ArrayJson(run.link_probes, LinkProbeJson)},
          {"log_events", ArrayJson(run.log_events, LogEventJson)},
          {"step", StepJson(run.step)},
          {"step_samples", ArrayJson(run.step_samples, StepSampleJson)}};
}

void AppendRunRecordJson(const RunRecord& run, std::string* out) {
  // The members in the order nlohmann::json's sorted object dumps them, so
  // that the text is RunRecordToJson(run).dump()'s, byte for byte.
  *out += '{';
  AppendArray("channels", run.channels, ChannelJson, out);
  *out += ',';
  AppendMember("format", kRunFileFormat, out);
  *out += ',';
  AppendArray("latency_samples", run.latency_samples, LatencySampleJson, out);
  *out += ',';
  AppendArray("link_probes", run.link_probes, LinkProbeJson, out);
  *out += ',';
  AppendArray("log_events", run.log_events, LogEventJson, out);
  *out += ',';
  AppendArray("net_devices", run.net_devices, NetDeviceJson, out);
  *out += ',';
  AppendArray("rank_timings", run.rank_timings, RankTimingJson, out);
  *out += ',';
  AppendArray("ranks", run.rank_devices, RankDeviceJson, out);
  *out += ',';
  AppendArray("results", run.results, ResultJson, out);
  *out += ',';
  AppendMember("run", RunFieldsJson(run), out);
  *out += ',';
  AppendMember("step", StepJson(run.step), out);
  *out += ',';
  AppendArray("step_samples", run.step_samples, StepSampleJson, out);
  *out += ',';
  AppendMember("version", kRunFileVersion, out);
  *out += '}';
}

bool IsRunFile(const nlohmann::json& document) {
  return document.is_object() && document.contains("format") &&
         document["format"] == kRunFileFormat;
}

namespace {

namespace {

const json kNull;
const json kEmptyArray = json::array();
const json kEmptyObject = json::object();

// object.value(key, fallback) without its copy: value() returns the member by
// value, which for a spooled run's results array is a second copy of the
// largest part of the document. The same errors as value() (a non-object
// throws its type_error).
const json& Member(const json& object, const char* key, const json& fallback) {
  if (!object.is_object()) {
    (void)object.value(key, fallback);  // throws
    return fallback;
  }
  auto it = object.find(key);
  return it == object.end() ? fallback : *it;
}

// One element of the record's three long lists (the rest is read in
// ReadRunRecord). false: *r holds the error.
bool ReadResultRow(Reader& r, const json& x, ResultRow* row) {
  SizeRowFields(row->row, FieldReader{r, x});
  if (!r.ok()) return false;
  row->row.oop = ReadMeasurement(r, Member(x, "oop", kNull));
  row->row.ip = ReadMeasurement(r, Member(x, "ip", kNull));
  LatencyFields(row->latency, FieldReader{r, Member(x, "latency", kEmptyObject)});
  return r.ok();
}

bool ReadLatencySample(Reader& r, const json& s, LatencySample* sample) {
  if (!s.is_array() || s.size() != 4 || !s[0].is_number_integer() || !s[1].is_boolean() ||
      !s[2].is_number_integer() || !s[3].is_number()) {
    r.Fail("latency_samples", "expected [row_index, in_place, iteration, latency_us]");
    return false;
  }
  *sample = {s[0].get<int>(), s[1].get<bool>(), s[2].get<int>(), s[3].get<double>()};
  return true;
}

void ReadRankTiming(Reader& r, const json& t, RankTiming* timing) {
  RankTimingFields(*timing, FieldReader{r, t});
}

// The elements of the list `key` of a document, each just its fields, read
// with the Reader's checks (the first failure stays in *r).
template <typename T>
void ReadFieldsList(Reader& r, const json& doc, const char* key,
                    void (*fields)(T&, const FieldReader&), std::vector<T>* out) {
  for (const json& x : Member(doc, key, kEmptyArray)) {
    T item;
    fields(item, FieldReader{r, x});
    out->push_back(std::move(item));
  }
}

}  // namespace

std::optional<RunRecord> ReadRunRecord(const nlohmann::json& doc, std::string* error) {
  Reader r(error);
  int version = 0;
  r.Req(doc, "version", &version);
  if (r.ok() && version != kRunFileVersion) {
    r.Fail("version", std::to_string(version) + " is not supported (this fabtrack reads " +
                          std::to_string(kRunFileVersion) + ")");
  }
  if (!r.ok()) return std::nullopt;
  const json& j = Member(doc, "run", kEmptyObject);
  RunRecord run;
  RunFields(run, FieldReader{r, j});
  std::string status;
  r.Req(j, "status", &status);
  if (!r.ok()) return std::nullopt;
  if (status == "complete") {
    run.status = RunStatus::kComplete;
  } else if (status == "partial") {
    run.status = RunStatus::kPartial;
  } else if (status == "failed") {
    run.status = RunStatus::kFailed;
  } else {
    r.Fail("status", "expected complete, partial or failed");
    return std::nullopt;
  }
  ReadFieldsList(r, doc, "ranks", RankDeviceFields, &run.rank_devices);
  for (const json& x : Member(doc, "results", kEmptyArray)) {
    ResultRow row;
    if (!ReadResultRow(r, x, &row)) return std::nullopt;
    run.results.push_back(std::move(row));
  }
  for (const json& x : Member(doc, "latency_samples", kEmptyArray)) {
    LatencySample sample;
    if (!ReadLatencySample(r, x, &sample)) return std::nullopt;
    run.latency_samples.push_back(sample);
  }
  ReadFieldsList(r, doc, "rank_timings", RankTimingFields, &run.rank_timings);
  if (const json& s = Member(doc, "step", kNull); s.is_object()) {
    StepSummary step;
    StepFields(step, FieldReader{r, s});
    if (!r.ok()) return std::nullopt;
    run.step = step;
  }
  for (const json& s : Member(doc, "step_samples", kEmptyArray)) {
    if (!s.is_array() || s.size() != 4 || !s[0].is_number_integer() || !s[1].is_number() ||
        !s[2].is_number() || !s[3].is_number() || s[0].get<int64_t>() < 0 ||
        s[0].get<int64_t>() > 100000000) {
      r.Fail("step_samples", "expected [step, step_ms, compute_ms, exposed_ms]");
      return std::nullopt;
    }
    run.step_samples.push_back(
        {s[0].get<int>(), s[1].get<double>(), s[2].get<double>(), s[3].get<double>()});
  }
  ReadFieldsList(r, doc, "link_probes", LinkProbeFields, &run.link_probes);
  ReadFieldsList(r, doc, "net_devices", NetDeviceFields, &run.net_devices);
  ReadFieldsList(r, doc, "channels", ChannelFields, &run.channels);
  ReadFieldsList(r, doc, "log_events", LogEventFields, &run.log_events);
  if (!r.ok()) return std::nullopt;
  return run;
}

}  // namespace

namespace {

// Thrown out of the parser callback by an element that does not read.
struct ElementError {};

}  // namespace

std::optional<RunRecord> ParseRunRecordText(std::string_view text, const std::string& run_key,
                                            nlohmann::json* document, std::string* error) {
  // nlohmann's callback depths: members of the top object are at 1; the run
  // object's members at 1 (the run is the document) or 2 (it is run_key's
  // value); a member array's elements one deeper.
  const int member_depth = run_key.empty() ? 1 : 2;
  std::string top_key, list_key;
  std::vector<ResultRow> results;
  std::vector<LatencySample> samples;
  std::vector<RankTiming> timings;
  Reader r(error);
  const json::parser_callback_t keep = [&](int depth, json::parse_event_t event,
                                           json& parsed) -> bool {
    using Event = json::parse_event_t;
    if (event == Event::key) {
      if (depth == 1) top_key = parsed.get<std::string>();
      if (depth == member_depth) list_key = parsed.get<std::string>();
      // A repeated name replaces the earlier member in the document: here too.
      const bool in_run = run_key.empty() || top_key == run_key;
      if (depth == 1 && !run_key.empty() && top_key == run_key) {
        results.clear();
        samples.clear();
        timings.clear();
      } else if (depth == member_depth && in_run) {
        if (list_key == "results") results.clear();
        if (list_key == "latency_samples") samples.clear();
        if (list_key == "rank_timings") timings.clear();
      }
      return true;
    }
    if (depth != member_depth + 1 || (!run_key.empty() && top_key != run_key)) return true;
    if (event != Event::object_end && event != Event::array_end && event != Event::value) {
      return true;
    }
    // A whole element of a long list: read it now, keep no document of it.
    if (list_key == "results") {
      ResultRow row;
      if (!ReadResultRow(r, parsed, &row)) throw ElementError{};
      results.push_back(std::move(row));
      return false;
    }
    if (list_key == "latency_samples") {
      LatencySample sample;
      if (!ReadLatencySample(r, parsed, &sample)) throw ElementError{};
      samples.push_back(sample);
      return false;
    }
    if (list_key == "rank_timings") {
      RankTiming timing;
      ReadRankTiming(r, parsed, &timing);
      if (!r.ok()) throw ElementError{};
      timings.push_back(timing);
      return false;
    }
    return true;
  };
  try {
    *document = json::parse(text.begin(), text.end(), keep);
  } catch (const ElementError&) {
    return std::nullopt;
  } catch (const json::exception& e) {
    *error = std::string("not JSON: ") + e.what();
    return std::nullopt;
  }
  const json* run_json = document;
  if (!run_key.empty()) {
    if (!document->is_object() || !document->contains(run_key)) {
      *error = "field \"" + run_key + "\": missing";
      return std::nullopt;
    }
    run_json = &(*document)[run_key];
  }
  std::optional<RunRecord> run = RunRecordFromJson(*run_json, error);
  if (!run) return std::nullopt;
  // The document's lists are empty now: their elements were read above.
  run->results = std::move(results);
  run->latency_samples = std::move(samples);
  run->rank_timings = std::move(timings);
  return run;
}

std::optional<RunRecord> RunRecordFromJson(const nlohmann::json& doc, std::string* error) {
  // The field readers check types; this catches what slips past them (a
  // number where value() expects text), found by fuzzing.
  try {
    return ReadRunRecord(doc, error);
  } catch (const nlohmann::json::exception& e) {
    *error = std::string("malformed result file: ") + e.what();
    return std::nullopt;
  }
}

}  // namespace fabtrack
