#include "core/run_record_json.h"

#include <limits>
#include <string_view>
#include <vector>

#include "core/json_optional.h"

namespace fabtrack {
namespace {

using nlohmann::json;

json MeasurementJson(const std::optional<Measurement>& m) {
  if (!m) return nullptr;
  json j = {{"time_us", OptionalJson(m->time_us)},
            {"algbw", OptionalJson(m->algbw_gbps)},
            {"busbw", OptionalJson(m->busbw_gbps)},
            {"wrong", OptionalJson(m->wrong)},
            {"max_error", OptionalJson(m->max_error)}};
  // The per-iteration statistics only when the producer had them: a spooled
  // 300k-row ingest of plain tables stays the size it was.
  if (m->iter_min_us || m->iter_max_us || m->iter_p50_us || m->iter_p99_us || m->iter_cv_pct) {
    j["iter"] = {{"min_us", OptionalJson(m->iter_min_us)},
                 {"max_us", OptionalJson(m->iter_max_us)},
                 {"p50_us", OptionalJson(m->iter_p50_us)},
                 {"p99_us", OptionalJson(m->iter_p99_us)},
                 {"cv_pct", OptionalJson(m->iter_cv_pct)}};
  }
  return j;
}

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

std::optional<Measurement> ReadMeasurement(Reader& r, const json& j) {
  if (j.is_null()) return std::nullopt;
  Measurement m;
  r.Opt(j, "time_us", &m.time_us);
  r.Opt(j, "algbw", &m.algbw_gbps);
  r.Opt(j, "busbw", &m.busbw_gbps);
  r.Opt(j, "wrong", &m.wrong);
  r.Opt(j, "max_error", &m.max_error);
  if (j.is_object() && j.contains("iter")) {
    const json& iter = j["iter"];
    r.Opt(iter, "min_us", &m.iter_min_us);
    r.Opt(iter, "max_us", &m.iter_max_us);
    r.Opt(iter, "p50_us", &m.iter_p50_us);
    r.Opt(iter, "p99_us", &m.iter_p99_us);
    r.Opt(iter, "cv_pct", &m.iter_cv_pct);
  }
  return m;
}

}  // namespace

namespace {

json StepJson(const std::optional<StepSummary>& step) {
  if (!step) return nullptr;
  const StepSummary& s = *step;
  return {{"model_params", s.model_params},
          {"grad_dtype", s.grad_dtype},
          {"grad_bytes", s.grad_bytes},
          {"bucket_bytes", s.bucket_bytes},
          {"buckets", s.buckets},
          {"forward_ms", s.forward_ms},
          {"backward_ms", s.backward_ms},
          {"steps", s.steps},
          {"step_ms_p50", s.step_ms_p50},
          {"step_ms_p90", s.step_ms_p90},
          {"step_ms_p99", s.step_ms_p99},
          {"step_ms_max", s.step_ms_max},
          {"step_ms_mean", s.step_ms_mean},
          {"compute_ms_p50", s.compute_ms_p50},
          {"exposed_ms_p50", s.exposed_ms_p50},
          {"exposed_ms_p99", s.exposed_ms_p99},
          {"exposed_ms_mean", s.exposed_ms_mean},
          {"idle_share_p50", s.idle_share_p50},
          {"idle_share_mean", s.idle_share_mean}};
}

}  // namespace

namespace {

// One element of each of the record's lists, and the run's own fields: what
// the whole document and the streaming writer share.
json StepSampleJson(const StepSample& s) { return {s.step, s.step_ms, s.compute_ms, s.exposed_ms}; }

json ResultJson(const ResultRow& r) {
  const LatencySummary& l = r.latency;
  return {{"size_bytes", r.row.size_bytes},
          {"count", OptionalJson(r.row.count)},
          {"type", OptionalJson(r.row.type)},
          {"redop", OptionalJson(r.row.redop)},
          {"root", OptionalJson(r.row.root)},
          {"oop", MeasurementJson(r.row.oop)},
          {"ip", MeasurementJson(r.row.ip)},
          {"line", r.row.line},
          {"latency",
           {{"mean_us", OptionalJson(l.mean_us)},
            {"p50_us", OptionalJson(l.p50_us)},
            {"p90_us", OptionalJson(l.p90_us)},
            {"p99_us", OptionalJson(l.p99_us)},
            {"min_us", OptionalJson(l.min_us)},
            {"max_us", OptionalJson(l.max_us)},
            {"stddev_us", OptionalJson(l.stddev_us)},
            {"cv", OptionalJson(l.cv)},
            {"ip_p50_us", OptionalJson(l.ip_p50_us)},
            {"ip_p99_us", OptionalJson(l.ip_p99_us)},
            {"ip_cv", OptionalJson(l.ip_cv)},
            {"straggler_host", OptionalJson(l.straggler_host)},
            {"straggler_rank", OptionalJson(l.straggler_rank)},
            {"straggler_excess_us", OptionalJson(l.straggler_excess_us)}}}};
}

json LatencySampleJson(const LatencySample& s) {
  return {s.row_index, s.in_place, s.iteration, s.latency_us};
}

json RankTimingJson(const RankTiming& t) {
  return {{"row_index", t.row_index},
          {"in_place", t.in_place},
          {"rank", t.rank},
          {"host", OptionalJson(t.host)},
          {"mean_us", OptionalJson(t.mean_us)},
          {"p50_us", OptionalJson(t.p50_us)},
          {"p99_us", OptionalJson(t.p99_us)},
          {"max_us", OptionalJson(t.max_us)},
          {"lateness_us", OptionalJson(t.lateness_us)}};
}

json LinkProbeJson(const LinkProbeResult& p) {
  return {{"host_a", p.host_a},
          {"host_b", p.host_b},
          {"bytes", p.bytes},
          {"seconds", p.seconds},
          {"gbps", p.gbps}};
}

json RankDeviceJson(const RankDevice& d) {
  return {{"rank", d.rank},
          {"group", OptionalJson(d.group)},
          {"host", d.host},
          {"pid", OptionalJson(d.pid)},
          {"device", OptionalJson(d.device)},
          {"bus_id", d.bus_id},
          {"gpu_model", d.gpu_model}};
}

// Transport evidence from NCCL logs: absent from harness files (the harness
// records it at the end), present when a spooled ingest is kept.
json NetDeviceJson(const NetDevice& d) {
  return {{"host", d.host}, {"index", d.index}, {"name", d.name}, {"port", OptionalJson(d.port)},
          {"link", d.link}, {"sharp", d.sharp}};
}

json LogEventJson(const LogMessage& m) {
  return {{"host", m.host}, {"level", m.level}, {"text", m.text}, {"line", m.line}};
}

json ChannelJson(const ChannelObservation& c) {
  return {{"host", c.host},
          {"pid", OptionalJson(c.pid)},
          {"cuda_device", OptionalJson(c.cuda_device)},
          {"channel", c.channel},
          {"conn_index", OptionalJson(c.conn_index)},
          {"from_rank", c.from_rank},
          {"to_rank", c.to_rank},
          {"from_bus_id", c.from_bus_id},
          {"to_bus_id", c.to_bus_id},
          {"direction", OptionalJson(c.direction)},
          {"family", c.family},
          {"detail", c.detail},
          {"nic_index", OptionalJson(c.nic_index)},
          {"gdrdma", c.gdrdma},
          {"is_ring_line", c.is_ring_line},
          {"line", c.line}};
}

json RunFieldsJson(const RunRecord& run) {
  return {{"cluster", run.cluster},
          {"started_at", run.started_at},
          {"ended_at", OptionalJson(run.ended_at)},
          {"source", run.source},
          {"backend", OptionalJson(run.backend)},
          {"collective", OptionalJson(run.collective)},
          {"dtype", OptionalJson(run.dtype)},
          {"redop", OptionalJson(run.redop)},
          {"ranks", OptionalJson(run.ranks)},
          {"nodes", OptionalJson(run.nodes)},
          {"gpus_per_node", OptionalJson(run.gpus_per_node)},
          {"ranks_per_node", OptionalJson(run.ranks_per_node)},
          {"hosts", run.hosts},
          {"gpu_model", OptionalJson(run.gpu_model)},
          {"nccl_version", OptionalJson(run.nccl_version)},
          {"cuda_version", OptionalJson(run.cuda_version)},
          {"driver_version", OptionalJson(run.driver_version)},
          {"mpi_version", OptionalJson(run.mpi_version)},
          {"network", OptionalJson(run.network)},
          {"transports", run.transports},
          {"gdrdma", OptionalJson(run.gdrdma)},
          {"command_line", OptionalJson(run.command_line)},
          {"nccl_env", run.nccl_env},
          {"node_facts", run.node_facts},
          {"slurm_job_id", OptionalJson(run.slurm_job_id)},
          {"slurm_step_id", OptionalJson(run.slurm_step_id)},
          {"tags", run.tags},
          {"sweep_id", OptionalJson(run.sweep_id)},
          {"parameters", run.parameters},
          {"warmup_iters", OptionalJson(run.warmup_iters)},
          {"iters", OptionalJson(run.iters)},
          {"avg_busbw_gbps", OptionalJson(run.avg_busbw_gbps)},
          {"oob_ok", OptionalJson(run.oob_ok)},
          {"oob_count", OptionalJson(run.oob_count)},
          {"link_straggler_host", OptionalJson(run.link_straggler_host)},
          {"machines", OptionalJson(run.machines)},
          {"max_ranks_per_machine", OptionalJson(run.max_ranks_per_machine)},
          {"cpus_per_machine", OptionalJson(run.cpus_per_machine)},
          {"content_hash", run.content_hash},
          {"table_index", run.table_index},
          {"source_file", OptionalJson(run.source_file)},
          {"nccl_tests_version", OptionalJson(run.nccl_tests_version)},
          {"status", RunStatusName(run.status)}};
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
  r.Req(x, "size_bytes", &row->row.size_bytes);
  r.Opt(x, "count", &row->row.count);
  r.Opt(x, "type", &row->row.type);
  r.Opt(x, "redop", &row->row.redop);
  r.Opt(x, "root", &row->row.root);
  r.Def(x, "line", &row->row.line);
  if (!r.ok()) return false;
  row->row.oop = ReadMeasurement(r, Member(x, "oop", kNull));
  row->row.ip = ReadMeasurement(r, Member(x, "ip", kNull));
  const json& l = Member(x, "latency", kEmptyObject);
  LatencySummary& s = row->latency;
  r.Opt(l, "mean_us", &s.mean_us);
  r.Opt(l, "p50_us", &s.p50_us);
  r.Opt(l, "p90_us", &s.p90_us);
  r.Opt(l, "p99_us", &s.p99_us);
  r.Opt(l, "min_us", &s.min_us);
  r.Opt(l, "max_us", &s.max_us);
  r.Opt(l, "stddev_us", &s.stddev_us);
  r.Opt(l, "cv", &s.cv);
  r.Opt(l, "ip_p50_us", &s.ip_p50_us);
  r.Opt(l, "ip_p99_us", &s.ip_p99_us);
  r.Opt(l, "ip_cv", &s.ip_cv);
  r.Opt(l, "straggler_host", &s.straggler_host);
  r.Opt(l, "straggler_rank", &s.straggler_rank);
  r.Opt(l, "straggler_excess_us", &s.straggler_excess_us);
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
  r.Req(t, "row_index", &timing->row_index);
  r.Req(t, "in_place", &timing->in_place);
  r.Req(t, "rank", &timing->rank);
  r.Opt(t, "host", &timing->host);
  r.Opt(t, "mean_us", &timing->mean_us);
  r.Opt(t, "p50_us", &timing->p50_us);
  r.Opt(t, "p99_us", &timing->p99_us);
  r.Opt(t, "max_us", &timing->max_us);
  r.Opt(t, "lateness_us", &timing->lateness_us);
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
  r.Req(j, "cluster", &run.cluster);
  r.Req(j, "started_at", &run.started_at);
  r.Opt(j, "ended_at", &run.ended_at);
  r.Req(j, "source", &run.source);
  r.Opt(j, "backend", &run.backend);
  r.Opt(j, "collective", &run.collective);
  r.Opt(j, "dtype", &run.dtype);
  r.Opt(j, "redop", &run.redop);
  r.Opt(j, "ranks", &run.ranks);
  r.Opt(j, "nodes", &run.nodes);
  r.Opt(j, "gpus_per_node", &run.gpus_per_node);
  r.Opt(j, "ranks_per_node", &run.ranks_per_node);
  r.Opt(j, "gpu_model", &run.gpu_model);
  r.Opt(j, "nccl_version", &run.nccl_version);
  r.Opt(j, "cuda_version", &run.cuda_version);
  r.Opt(j, "driver_version", &run.driver_version);
  r.Opt(j, "mpi_version", &run.mpi_version);
  r.Opt(j, "network", &run.network);
  r.Opt(j, "gdrdma", &run.gdrdma);
  r.Opt(j, "command_line", &run.command_line);
  r.Opt(j, "slurm_job_id", &run.slurm_job_id);
  r.Opt(j, "slurm_step_id", &run.slurm_step_id);
  r.Opt(j, "sweep_id", &run.sweep_id);
  r.Opt(j, "warmup_iters", &run.warmup_iters);
  r.Opt(j, "iters", &run.iters);
  r.Opt(j, "avg_busbw_gbps", &run.avg_busbw_gbps);
  r.Opt(j, "oob_ok", &run.oob_ok);
  r.Opt(j, "oob_count", &run.oob_count);
  r.Opt(j, "link_straggler_host", &run.link_straggler_host);
  r.Opt(j, "machines", &run.machines);
  r.Opt(j, "max_ranks_per_machine", &run.max_ranks_per_machine);
  r.Opt(j, "cpus_per_machine", &run.cpus_per_machine);
  r.Req(j, "content_hash", &run.content_hash);
  r.Opt(j, "source_file", &run.source_file);
  r.Opt(j, "nccl_tests_version", &run.nccl_tests_version);
  run.table_index = j.value("table_index", 0);
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
  try {
    run.hosts = j.value("hosts", std::vector<std::string>{});
    run.transports = j.value("transports", std::vector<std::string>{});
    run.nccl_env = j.value("nccl_env", std::map<std::string, std::string>{});
    run.node_facts = j.value("node_facts", std::map<std::string, std::string>{});
    run.tags = j.value("tags", std::map<std::string, std::string>{});
    run.parameters = j.value("parameters", std::map<std::string, std::string>{});
  } catch (const std::exception& e) {
    r.Fail("run", e.what());
    return std::nullopt;
  }
  for (const json& d : Member(doc, "ranks", kEmptyArray)) {
    RankDevice dev;
    r.Req(d, "rank", &dev.rank);
    r.Opt(d, "group", &dev.group);
    r.Req(d, "host", &dev.host);
    r.Opt(d, "pid", &dev.pid);
    r.Opt(d, "device", &dev.device);
    dev.bus_id = d.value("bus_id", "");
    dev.gpu_model = d.value("gpu_model", "");
    run.rank_devices.push_back(dev);
  }
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
  for (const json& x : Member(doc, "rank_timings", kEmptyArray)) {
    RankTiming timing;
    ReadRankTiming(r, x, &timing);
    run.rank_timings.push_back(timing);
  }
  if (const json& s = Member(doc, "step", kNull); s.is_object()) {
    StepSummary step;
    r.Req(s, "model_params", &step.model_params);
    r.Req(s, "grad_dtype", &step.grad_dtype);
    r.Req(s, "grad_bytes", &step.grad_bytes);
    r.Req(s, "bucket_bytes", &step.bucket_bytes);
    r.Req(s, "buckets", &step.buckets);
    r.Req(s, "forward_ms", &step.forward_ms);
    r.Req(s, "backward_ms", &step.backward_ms);
    r.Req(s, "steps", &step.steps);
    r.Req(s, "step_ms_p50", &step.step_ms_p50);
    r.Req(s, "step_ms_p90", &step.step_ms_p90);
    r.Req(s, "step_ms_p99", &step.step_ms_p99);
    r.Req(s, "step_ms_max", &step.step_ms_max);
    r.Req(s, "step_ms_mean", &step.step_ms_mean);
    r.Req(s, "compute_ms_p50", &step.compute_ms_p50);
    r.Req(s, "exposed_ms_p50", &step.exposed_ms_p50);
    r.Req(s, "exposed_ms_p99", &step.exposed_ms_p99);
    r.Req(s, "exposed_ms_mean", &step.exposed_ms_mean);
    r.Req(s, "idle_share_p50", &step.idle_share_p50);
    r.Req(s, "idle_share_mean", &step.idle_share_mean);
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
  for (const json& p : Member(doc, "link_probes", kEmptyArray)) {
    LinkProbeResult probe;
    r.Req(p, "host_a", &probe.host_a);
    r.Req(p, "host_b", &probe.host_b);
    r.Req(p, "bytes", &probe.bytes);
    r.Req(p, "seconds", &probe.seconds);
    r.Req(p, "gbps", &probe.gbps);
    run.link_probes.push_back(probe);
  }
  for (const json& d : Member(doc, "net_devices", kEmptyArray)) {
    NetDevice dev;
    r.Req(d, "host", &dev.host);
    r.Req(d, "index", &dev.index);
    r.Req(d, "name", &dev.name);
    r.Opt(d, "port", &dev.port);
    r.Req(d, "link", &dev.link);
    r.Req(d, "sharp", &dev.sharp);
    run.net_devices.push_back(dev);
  }
  for (const json& x : Member(doc, "channels", kEmptyArray)) {
    ChannelObservation c;
    r.Req(x, "host", &c.host);
    r.Opt(x, "pid", &c.pid);
    r.Opt(x, "cuda_device", &c.cuda_device);
    r.Req(x, "channel", &c.channel);
    r.Opt(x, "conn_index", &c.conn_index);
    r.Req(x, "from_rank", &c.from_rank);
    r.Req(x, "to_rank", &c.to_rank);
    r.Req(x, "from_bus_id", &c.from_bus_id);
    r.Req(x, "to_bus_id", &c.to_bus_id);
    r.Opt(x, "direction", &c.direction);
    r.Req(x, "family", &c.family);
    r.Req(x, "detail", &c.detail);
    r.Opt(x, "nic_index", &c.nic_index);
    r.Req(x, "gdrdma", &c.gdrdma);
    r.Req(x, "is_ring_line", &c.is_ring_line);
    r.Req(x, "line", &c.line);
    run.channels.push_back(c);
  }
  for (const json& x : Member(doc, "log_events", kEmptyArray)) {
    LogMessage m;
    r.Req(x, "host", &m.host);
    r.Req(x, "level", &m.level);
    r.Req(x, "text", &m.text);
    r.Req(x, "line", &m.line);
    run.log_events.push_back(std::move(m));
  }
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
