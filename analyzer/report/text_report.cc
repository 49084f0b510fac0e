#include "analyzer/report/text_report.h"

#include <sstream>

#include "analyzer/run_facts.h"

namespace fabtrack::analyzer {

std::string TextReport(const AnalysisResult& result, const std::string& judged_from_iso) {
  std::ostringstream out;
  int by_severity[3] = {0, 0, 0};
  for (const Finding& f : result.findings) ++by_severity[static_cast<int>(f.severity)];
  out << "fabtrack analyze: cluster " << result.cluster << ", " << result.judged_runs << " run(s) "
      << (result.judged_jobs ? "and " + std::to_string(result.judged_jobs) + " Inspector job(s) "
                             : "")
      << "judged since " << judged_from_iso << ": " << by_severity[2] << " critical, "
      << by_severity[1] << " warning, " << by_severity[0] << " info\n";
  if (result.judged_runs == 0) out << "  (no run to judge in that window)\n";
  for (const Finding& f : result.findings) {
    std::string severity = SeverityName(f.severity);
    for (char& c : severity) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << severity << "  " << f.kind << "  " << f.subject << "\n    " << f.message;
    if (f.run_id) {
      out << "\n    run " << *f.run_id << " started " << f.run_started_at.value_or("?");
    }
    out << "\n";
  }
  if (result.findings.empty() && result.judged_runs > 0) out << "OK: nothing to report\n";
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
