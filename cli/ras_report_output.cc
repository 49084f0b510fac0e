// Printing for cli/ras_report_output.h: moved out of ras_command.cc so that
// `ras status` and `ras read` print a verdict the same way.
#include "cli/ras_report_output.h"

#include <iostream>

namespace fabtrack::cli {
namespace {

std::string RasRankLine(const ras::RankRef& k) {
  std::string s = "rank " + std::to_string(k.rank);
  s += k.node.empty() ? "  node ?" : "  node " + k.node;
  if (!k.gpu.empty()) s += "  GPU " + k.gpu;
  if (k.pid) s += "  pid " + std::to_string(*k.pid);
  if (!k.state.empty()) s += "  " + k.state;
  return s;
}

nlohmann::json RasRankJson(const ras::RankRef& k) {
  nlohmann::json j = {{"rank", k.rank}, {"node", k.node}, {"gpu", k.gpu}};
  j["pid"] = k.pid ? nlohmann::json(*k.pid) : nlohmann::json(nullptr);
  j["state"] = k.state;
  return j;
}

}  // namespace

void PrintRasVerdictText(const RasReportSource& source, const ras::Report& report,
                         const std::string& format, const std::string& body, const ras::Verdict& v,
                         bool verbose) {
  std::cout << source.title;
  std::string about;
  if (!report.nccl_version.empty()) about += "NCCL " + report.nccl_version + ", ";
  about += format + " report";
  if (report.json_repaired) about += ", its 2.28.7-2.28.9 lost comma repaired";
  std::cout << " (" << about << "): " << ras::HealthLabel(v.health) << ", " << v.communicators
            << (v.communicators == 1 ? " communicator" : " communicators");
  if (report.job.nodes) {
    std::cout << ", " << *report.job.nodes << " nodes";
    if (report.job.gpus) std::cout << ", " << *report.job.gpus << " GPUs";
  }
  std::cout << "\n";
  for (const ras::Finding& f : v.findings) {
    std::cout << "  " << ras::HealthLabel(f.severity) << " " << f.kind;
    if (!f.communicator.empty()) std::cout << " " << f.communicator;
    std::cout << ": " << f.message << "\n";
    for (const ras::ProcessRef& p : f.processes) {
      std::cout << "    process " << p.pid << "  node " << p.node << "  GPU " << p.gpus << "\n";
    }
    for (const ras::RankRef& k : f.ranks) std::cout << "    " << RasRankLine(k) << "\n";
  }
  // Not a finding (a job may be uneven on purpose), but where a missing
  // process would show first.
  for (const ras::OutlierNode& n : report.job.outlier_nodes) {
    std::cout << "  outlier node " << n.node << ": its process count differs from most nodes' "
              << "(RAS lists processes " << n.pids << ")\n";
  }
  if (verbose) {
    std::cout << "\n" << body;
    if (!body.empty() && body.back() != '\n') std::cout << "\n";
  }
}

void PrintRasVerdictJson(const RasReportSource& source, const ras::Report& report,
                         const std::string& format, const std::string& body, const ras::Verdict& v,
                         bool verbose) {
  nlohmann::json doc = source.fields;
  doc["report_format"] = format;
  doc["nccl_version"] = report.nccl_version;
  doc["json_repaired"] = report.json_repaired;
  doc["health"] = ras::HealthLabel(v.health);
  doc["communicators"] = v.communicators;
  nlohmann::json findings = nlohmann::json::array();
  for (const ras::Finding& f : v.findings) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const ras::RankRef& k : f.ranks) ranks.push_back(RasRankJson(k));
    nlohmann::json processes = nlohmann::json::array();
    for (const ras::ProcessRef& p : f.processes) {
      processes.push_back({{"pid", p.pid}, {"node", p.node}, {"gpus", p.gpus}});
    }
    findings.push_back({{"severity", ras::HealthLabel(f.severity)},
                        {"kind", f.kind},
                        {"communicator", f.communicator},
                        {"message", f.message},
                        {"ranks", std::move(ranks)},
                        {"processes", std::move(processes)}});
  }
  doc["findings"] = std::move(findings);
  nlohmann::json outliers = nlohmann::json::array();
  for (const ras::OutlierNode& n : report.job.outlier_nodes) {
    outliers.push_back({{"node", n.node}, {"pids", n.pids}});
  }
  doc["outlier_nodes"] = std::move(outliers);
  if (verbose) doc["report"] = body;
  std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
}

}  // namespace fabtrack::cli
