#include "analyzer/report/json_report.h"

#include "analyzer/problems.h"

namespace fabtrack::analyzer {
namespace {

template <typename T>
nlohmann::json OrNull(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

}  // namespace

nlohmann::json FindingJson(const Finding& f) {
  return {{"kind", f.kind},
          {"severity", SeverityName(f.severity)},
          {"subject", f.subject},
          {"run_id", OrNull(f.run_id)},
          {"run_started_at", OrNull(f.run_started_at)},
          {"nodes", OrNull(f.nodes)},
          {"host", OrNull(f.host)},
          {"device", OrNull(f.device)},
          {"port", OrNull(f.port)},
          {"size_bytes", OrNull(f.size_bytes)},
          {"value", OrNull(f.value)},
          {"baseline", OrNull(f.baseline)},
          {"unit", OrNull(f.unit)},
          {"message", f.message},
          {"evidence", f.evidence}};
}

nlohmann::json ProblemJson(const Problem& p) {
  nlohmann::json j = {{"id", p.id},
                      {"kind", p.kind},
                      {"subject", p.subject},
                      {"severity", SeverityName(p.severity)},
                      {"state", ProblemStateName(p.state)},
                      {"first_seen", p.first_seen},
                      {"last_seen", p.last_seen},
                      {"nights", p.nights},
                      {"findings", p.findings},
                      {"message", p.latest.message},
                      {"host", OrNull(p.latest.host)},
                      {"device", OrNull(p.latest.device)},
                      {"port", OrNull(p.latest.port)},
                      {"latest", FindingJson(p.latest)},
                      {"worst", FindingJson(p.worst)}};
  j["related"] = nlohmann::json::array();
  for (const Finding& r : p.related) j["related"].push_back(FindingJson(r));
  j["ack"] = p.ack ? nlohmann::json{{"until", p.ack->until}, {"note", p.ack->note}}
                   : nlohmann::json(nullptr);
  return j;
}

nlohmann::json AnalysisJson(const AnalysisResult& result) {
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : result.findings) findings.push_back(FindingJson(f));
  nlohmann::json training = nlohmann::json::array();
  for (const TrainingLine& t : result.training) {
    training.push_back({{"run_id", t.run_id},
                        {"run_started_at", t.run_started_at},
                        {"family", t.family},
                        {"nodes", t.nodes},
                        {"gpus", t.gpus},
                        {"step_ms_p50", t.step_ms_p50},
                        {"compute_ms_p50", t.compute_ms_p50},
                        {"exposed_ms_p50", t.exposed_ms_p50},
                        {"idle_share_p50", t.idle_share_p50},
                        {"gpu_hours_per_1000_steps", t.gpu_hours_per_1000_steps}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const Problem& p : result.problems) problems.push_back(ProblemJson(p));
  return {{"cluster", result.cluster},
          {"judged_runs", result.judged_runs},
          {"judged_jobs", result.judged_jobs},
          {"judged_port_windows", result.judged_port_windows},
          {"judged_topologies", result.judged_topologies},
          {"exit_status", ExitStatusOf(result)},
          {"verdict", VerdictLine(result.problems)},
          {"detectors", result.detectors_run},
          {"problems", std::move(problems)},
          {"findings", std::move(findings)},
          {"training", std::move(training)}};
}

}  // namespace fabtrack::analyzer
