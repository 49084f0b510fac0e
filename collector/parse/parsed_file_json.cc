#include "collector/parse/parsed_file_json.h"

#include "core/json_optional.h"

namespace fabtrack {
namespace {

using nlohmann::json;

template <typename T>
json Opt(const std::optional<T>& v) {
  return OptionalJson(v);
}

json MeasurementJson(const std::optional<Measurement>& m) {
  if (!m) return nullptr;
  json j = {{"time_us", Opt(m->time_us)},
            {"algbw", Opt(m->algbw_gbps)},
            {"busbw", Opt(m->busbw_gbps)},
            {"wrong", Opt(m->wrong)}};
  if (m->max_error) j["max_error"] = *m->max_error;
  if (m->iter_p99_us) {
    j["iter"] = {{"min_us", Opt(m->iter_min_us)},
                 {"max_us", Opt(m->iter_max_us)},
                 {"p50_us", Opt(m->iter_p50_us)},
                 {"p99_us", Opt(m->iter_p99_us)},
                 {"cv_pct", Opt(m->iter_cv_pct)}};
  }
  return j;
}

json TestJson(const TestTable& t) {
  json rows = json::array();
  for (const SizeRow& r : t.rows) {
    rows.push_back({{"size_bytes", r.size_bytes},
                    {"count", Opt(r.count)},
                    {"type", Opt(r.type)},
                    {"redop", Opt(r.redop)},
                    {"root", Opt(r.root)},
                    {"oop", MeasurementJson(r.oop)},
                    {"ip", MeasurementJson(r.ip)}});
  }
  return {{"collective", Opt(t.collective)},
          {"ranks", Opt(t.ranks)},
          {"hosts", t.hosts},
          {"rows", rows},
          {"avg_busbw", Opt(t.avg_busbw)},
          {"oob_ok", Opt(t.oob_ok)},
          {"complete", t.complete},
          {"nccl_tests_version", Opt(t.nccl_tests_version)},
          {"lines", {t.first_line, t.last_line}}};
}

}  // namespace

nlohmann::json ParsedFileToJson(const ParsedFile& parsed) {
  json net_devices = json::array();
  for (const NetDevice& d : parsed.log.net_devices) {
    json dev = {{"name", d.name},
                {"port", Opt(d.port)},
                {"link", d.link.empty() ? json(nullptr) : json(d.link)},
                {"sharp", d.sharp}};
    if (!d.host.empty()) dev["host"] = d.host;
    dev["index"] = d.index;
    net_devices.push_back(dev);
  }
  json tests = json::array();
  for (const TestTable& t : parsed.tests) tests.push_back(TestJson(t));
  json errors = json::array();
  for (const ParseError& e : parsed.errors) {
    errors.push_back({{"line", e.line}, {"message", e.message}});
  }
  return {{"file", parsed.file},
          {"nccl_version", Opt(parsed.log.nccl_version)},
          {"network", Opt(parsed.log.network)},
          {"networks", parsed.log.networks},
          {"transports", parsed.Transports()},
          {"gdrdma", Opt(parsed.Gdrdma())},
          {"net_devices", net_devices},
          {"tests", tests},
          {"errors", errors}};
}

}  // namespace fabtrack
