#include "analyzer/report/text_report.h"

#include <sstream>

#include "analyzer/problems.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer {

std::string TextReport(const AnalysisResult& result, const std::string& judged_from_iso) {
  std::ostringstream out;
  int by_severity[3] = {0, 0, 0};
  for (const Finding& f : result.findings) ++by_severity[static_cast<int>(f.severity)];
  out << "fabtrack analyze: cluster " << result.cluster << ", " << result.judged_runs << " run(s) "
      << (result.judged_jobs ? "and " + std::to_string(result.judged_jobs) + " Inspector job(s) "
                             : "")
      << (result.judged_port_windows ? "and " + std::to_string(result.judged_port_windows) +
                                           " port window(s) between snapshots "
                                     : "")
      << (result.judged_topologies
              ? "and the wiring of " + std::to_string(result.judged_topologies) + " node(s) "
              : "")
      << "judged since " << judged_from_iso << ": " << by_severity[2] << " critical, "
      << by_severity[1] << " warning, " << by_severity[0] << " info\n";
  if (result.judged_runs == 0) out << "  (no run to judge in that window)\n";
  // Problems, not rows: a regression seen every night is one thing to fix.
  if (!result.problems.empty()) {
    out << VerdictLine(result.problems) << "\n";
    out << by_severity[2] + by_severity[1] << " finding(s) fold into " << result.problems.size()
        << " problem(s)";
    if (by_severity[0]) out << "; " << by_severity[0] << " info note(s) in --format json";
    out << "\n";
  }
  for (const Problem& p : result.problems) {
    out << SeverityLabel(p.severity) << "  " << p.kind << "  " << p.subject << "  ["
        << ProblemStateName(p.state) << ", " << p.first_seen.substr(0, 10);
    if (p.last_seen.substr(0, 10) != p.first_seen.substr(0, 10)) {
      out << " .. " << p.last_seen.substr(0, 10);
    }
    out << ", " << p.nights << " night" << (p.nights == 1 ? "" : "s") << ", id " << p.id
        << "]\n    " << p.latest.message;
    if (p.latest.run_id) {
      out << "\n    latest: run " << *p.latest.run_id << " started "
          << p.latest.run_started_at.value_or("?");
    }
    if (p.worst.run_id && p.worst.run_id != p.latest.run_id && p.worst.value) {
      out << "; worst: run " << *p.worst.run_id << ", " << FormatMeasure(*p.worst.value) << " "
          << p.worst.unit.value_or("");
    }
    for (const Finding& r : p.related) out << "\n    same cause: " << r.kind << ": " << r.message;
    if (p.ack) out << "\n    acknowledged until " << p.ack->until << ": " << p.ack->note;
    out << "\n";
  }
  if (result.problems.empty() &&
      (result.judged_runs > 0 || result.judged_port_windows > 0 || result.judged_topologies > 0)) {
    out << "OK: nothing to report";
    if (by_severity[0]) out << " (" << by_severity[0] << " info note(s) in --format json)";
    out << "\n";
  }
  if (!result.training.empty()) {
    out << "Training step (simulated data-parallel), what the network costs:\n";
    for (const TrainingLine& t : result.training) {
      out << "  " << t.family << ", " << t.nodes << " node" << (t.nodes == 1 ? "" : "s") << " ("
          << t.gpus << " GPUs): step " << FormatFixed(t.step_ms_p50, 1) << " ms, exposed "
          << FormatFixed(t.exposed_ms_p50, 1) << " ms, GPUs idle "
          << FormatFixed(t.idle_share_p50 * 100, 1)
          << "%: " << FormatFixed(t.gpu_hours_per_1000_steps, 3)
          << " GPU-hours lost per 1000 steps\n";
    }
  }
  return out.str();
}

}  // namespace fabtrack::analyzer
