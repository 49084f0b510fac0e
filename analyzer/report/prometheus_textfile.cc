#include "analyzer/report/prometheus_textfile.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "analyzer/run_facts.h"
#include "core/prometheus_text.h"

namespace fabtrack::analyzer {
namespace {

std::string Number(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

}  // namespace

std::string PrometheusTextfileImpl(const InputIndex& input, const AnalysisResult& result,
                                   double analyzed_at_epoch,
                                   const std::vector<std::string>& fingerprints) {
  std::ostringstream out;
  const std::string cluster = "cluster=\"" + EscapePrometheusLabel(result.cluster) + "\"";
  out << "# HELP fabtrack_analysis_timestamp_seconds When fabtrack analyze last ran.\n"
      << "# TYPE fabtrack_analysis_timestamp_seconds gauge\n"
      << "fabtrack_analysis_timestamp_seconds{" << cluster << "} " << Number(analyzed_at_epoch)
      << "\n";
  out << "# HELP fabtrack_analysis_judged_runs Runs judged by the last analysis.\n"
      << "# TYPE fabtrack_analysis_judged_runs gauge\n"
      << "fabtrack_analysis_judged_runs{" << cluster << "} " << result.judged_runs << "\n";
  out << "# HELP fabtrack_analysis_status Exit status of the last analysis (0 ok, 1 warning, 2 "
         "critical).\n"
      << "# TYPE fabtrack_analysis_status gauge\n"
      << "fabtrack_analysis_status{" << cluster << "} " << ExitStatusOf(result) << "\n";

  int by_severity[3] = {0, 0, 0};
  for (const Finding& f : result.findings) ++by_severity[static_cast<int>(f.severity)];
  out << "# HELP fabtrack_findings Findings of the last analysis by severity.\n"
      << "# TYPE fabtrack_findings gauge\n";
  for (Severity s : {Severity::kCritical, Severity::kWarning, Severity::kInfo}) {
    out << "fabtrack_findings{" << cluster << ",severity=\"" << SeverityName(s) << "\"} "
        << by_severity[static_cast<int>(s)] << "\n";
  }

  // One series per (kind, subject): the value is the finding's measured
  // value (1 when it has none); labels say what and where.
  std::map<std::string, std::string> lines;  // fingerprint -> line (dedup reruns)
  for (size_t i = 0; i < result.findings.size(); ++i) {
    const Finding& f = result.findings[i];
    std::string labels = cluster + ",kind=\"" + EscapePrometheusLabel(f.kind) + "\",severity=\"" +
                         SeverityName(f.severity) + "\",subject=\"" +
                         EscapePrometheusLabel(f.subject) + "\",fingerprint=\"" +
                         EscapePrometheusLabel(fingerprints[i]) + "\",host=\"" +
                         EscapePrometheusLabel(f.host.value_or("")) + "\"";
    lines[fingerprints[i]] =
        "fabtrack_finding{" + labels + "} " + Number(f.value.value_or(1)) + "\n";
  }
  out << "# HELP fabtrack_finding An open finding (value: what was measured, 1 when nothing "
         "was).\n"
      << "# TYPE fabtrack_finding gauge\n";
  for (const auto& [fp, line] : lines) out << line;

  // One series per problem (its id is the findings' fingerprint), the value
  // the nights it was seen; alerts select open ones, so an acknowledged or
  // recovered problem stops alerting and a regression alerts once.
  out << "# HELP fabtrack_problem A problem of the last analysis (value: nights it was seen).\n"
      << "# TYPE fabtrack_problem gauge\n";
  for (const Problem& p : result.problems) {
    out << "fabtrack_problem{" << cluster << ",id=\"" << EscapePrometheusLabel(p.id) << "\",kind=\""
        << EscapePrometheusLabel(p.kind) << "\",severity=\"" << SeverityName(p.severity)
        << "\",state=\"" << ProblemStateName(p.state) << "\",subject=\""
        << EscapePrometheusLabel(p.subject) << "\",host=\""
        << EscapePrometheusLabel(p.latest.host.value_or("")) << "\"} " << p.nights << "\n";
  }

  // Headline figures of the newest judged run of each series.
  std::map<std::string, const RunView*> newest;
  for (const RunView* run : input.judged()) newest[SeriesName(*run)] = run;
  std::ostringstream busbw, latency;
  for (const auto& [series, run] : newest) {
    const std::string labels = cluster + ",series=\"" + EscapePrometheusLabel(series) +
                               "\",nodes=\"" + (run->nodes ? std::to_string(*run->nodes) : "") +
                               "\"";
    auto results = input.Results(run->id);
    int64_t largest = results.empty() ? 0 : results.back().size_bytes;
    if (auto v = BandMedian(results, std::min(kBusbwHeadlineMinBytes, largest), INT64_MAX,
                            &ResultPoint::busbw_gbps)) {
      busbw << "fabtrack_busbw_bytes_per_second{" << labels << "} " << Number(*v * 1e9) << "\n";
    }
    if (auto v = BandMedian(results, 1, kLatencyHeadlineMaxBytes, &ResultPoint::time_us)) {
      latency << "fabtrack_small_message_latency_seconds{" << labels << "} " << Number(*v * 1e-6)
              << "\n";
    }
  }
  out << "# HELP fabtrack_busbw_bytes_per_second Median bus bandwidth over sizes >= 64 MiB (or "
         "the largest size) of the newest run per series.\n"
      << "# TYPE fabtrack_busbw_bytes_per_second gauge\n"
      << busbw.str();
  out << "# HELP fabtrack_small_message_latency_seconds Median time over sizes <= 64 KiB of the "
         "newest run per series.\n"
      << "# TYPE fabtrack_small_message_latency_seconds gauge\n"
      << latency.str();
  return out.str();
}

}  // namespace fabtrack::analyzer
