#include "collector/parse/parsed_file_json.h"

#include "core/json_optional.h"

namespace fabtrack {
namespace {

using nlohmann::json;

json MeasurementJson(const std::optional<Measurement>& m) {
  if (!m) return nullptr;
  json j = {{"time_us", OptionalJson(m->time_us)},
            {"algbw", OptionalJson(m->algbw_gbps)},
            {"busbw", OptionalJson(m->busbw_gbps)},
            {"wrong", OptionalJson(m->wrong)}};
  if (m->max_error) j["max_error"] = *m->max_error;
  if (m->iter_p99_us) {
    j["iter"] = {{"min_us", OptionalJson(m->iter_min_us)},
                 {"max_us", OptionalJson(m->iter_max_us)},
                 {"p50_us", OptionalJson(m->iter_p50_us)},
                 {"p99_us", OptionalJson(m->iter_p99_us)},
                 {"cv_pct", OptionalJson(m->iter_cv_pct)}};
  }
  return j;
}

json TestJson(const TestTable& t) {
  json rows = json::array();
  for (const SizeRow& r : t.rows) {
    rows.push_back({{"size_bytes", r.size_bytes},
                    {"count", OptionalJson(r.count)},
                    {"type", OptionalJson(r.type)},
                    {"redop", OptionalJson(r.redop)},
                    {"root", OptionalJson(r.root)},
                    {"oop", MeasurementJson(r.oop)},
                    {"ip", MeasurementJson(r.ip)}});
  }
  return {{"collective", OptionalJson(t.collective)},
          {"ranks", OptionalJson(t.ranks)},
          {"hosts", t.hosts},
          {"rows", rows},
          {"avg_busbw", OptionalJson(t.avg_busbw)},
          {"oob_ok", OptionalJson(t.oob_ok)},
          {"complete", t.complete},
          {"nccl_tests_version", OptionalJson(t.nccl_tests_version)},
          {"lines", {t.first_line, t.last_line}}};
}

}  // namespace

nlohmann::json TestTableToJson(const TestTable& table) { return TestJson(table); }

nlohmann::json ParsedFileToJson(const ParsedFile& parsed) {
  json j = ParsedFileToJsonWithoutTests(parsed);
  json tests = json::array();
  for (const TestTable& t : parsed.tests) tests.push_back(TestJson(t));
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
