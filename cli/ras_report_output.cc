// Printing for cli/ras_report_output.h: moved out of ras_command.cc so that
// `ras status` and `ras read` print a verdict the same way.
#include "cli/ras_report_output.h"

#include <cstdint>
#include <functional>
#include <iostream>
#include <limits>
#include <map>

#include "core/json_dump_writer.h"

namespace fabtrack::cli {
namespace {

using json_out::DumpWriter;
using json_out::Plain;

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

// The verdict as an nlohmann DOM, dumped: where a string needs escaping.
std::string VerdictJsonThroughDom(const RasReportSource& source, const ras::Report& report,
                                  const std::string& format, const std::string& body,
                                  const ras::Verdict& v, bool verbose) {
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
  return doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

// A source field the writer writes as the DOM would: a Plain string or an
// integer.
bool PlainScalar(const nlohmann::json& j) {
  if (j.is_string()) return Plain(j.get_ref<const std::string&>());
  if (j.is_number_unsigned()) {
    return j.get<uint64_t>() <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
  }
  return j.is_number_integer();
}

// The same document written straight from the structs (a verdict naming
// 10^5 ranks took ~90 MB as a DOM); nullopt where a string needs escaping
// (or --verbose's report text): the caller dumps the DOM then.
std::optional<std::string> VerdictJsonWritten(const RasReportSource& source,
                                              const ras::Report& report, const std::string& format,
                                              const ras::Verdict& v, bool verbose) {
  if (verbose || !source.fields.is_object() || !Plain(format) || !Plain(report.nccl_version)) {
    return std::nullopt;
  }
  for (const auto& [key, value] : source.fields.items()) {
    if (!Plain(key) || !PlainScalar(value)) return std::nullopt;
  }
  for (const ras::Finding& f : v.findings) {
    if (!Plain(f.kind) || !Plain(f.communicator) || !Plain(f.message)) return std::nullopt;
    for (const ras::RankRef& k : f.ranks) {
      if (!Plain(k.node) || !Plain(k.gpu) || !Plain(k.state)) return std::nullopt;
    }
    for (const ras::ProcessRef& p : f.processes) {
      if (!Plain(p.node) || !Plain(p.gpus)) return std::nullopt;
    }
  }
  for (const ras::OutlierNode& n : report.job.outlier_nodes) {
    if (!Plain(n.node) || !Plain(n.pids)) return std::nullopt;
  }
  std::string out;
  DumpWriter w(&out, 2, 0);
  // The top level's keys merged with the source's, sorted as the DOM's
  // object holds them (the verdict's own win, as assigned after them there).
  std::map<std::string, std::function<void()>> top;
  for (const auto& [key, value] : source.fields.items()) {
    const nlohmann::json* j = &value;
    top[key] = [&w, j] {
      if (j->is_string()) {
        w.String(j->get_ref<const std::string&>());
      } else if (j->is_number_unsigned()) {
        w.Number(static_cast<int64_t>(j->get<uint64_t>()));
      } else {
        w.Number(j->get<int64_t>());
      }
    };
  }
  top["communicators"] = [&] { w.Number(v.communicators); };
  top["findings"] = [&] {
    w.Objects(v.findings, [&](const ras::Finding& f) {
      w.Field("communicator", f.communicator);
      w.Field("kind", f.kind);
      w.Field("message", f.message);
      w.Field("processes", f.processes, [&](const ras::ProcessRef& p) {
        w.Field("gpus", p.gpus);
        w.Field("node", p.node);
        w.Field("pid", p.pid);
      });
      w.Field("ranks", f.ranks, [&](const ras::RankRef& k) {
        w.Field("gpu", k.gpu);
        w.Field("node", k.node);
        w.Field("pid", k.pid);
        w.Field("rank", k.rank);
        w.Field("state", k.state);
      });
      w.Field("severity", ras::HealthLabel(f.severity));
    });
  };
  top["health"] = [&] { w.String(ras::HealthLabel(v.health)); };
  top["json_repaired"] = [&] { w.Bool(report.json_repaired); };
  top["nccl_version"] = [&] { w.String(report.nccl_version); };
  top["outlier_nodes"] = [&] {
    w.Objects(report.job.outlier_nodes, [&](const ras::OutlierNode& n) {
      w.Field("node", n.node);
      w.Field("pids", n.pids);
    });
  };
  top["report_format"] = [&] { w.String(format); };
  w.Open('{');
  for (const auto& [key, write] : top) {
    w.Key(key.c_str());
    write();
  }
  w.Close('}', false);
  return out;
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
  std::optional<std::string> text = VerdictJsonWritten(source, report, format, v, verbose);
  std::cout << (text ? *text : VerdictJsonThroughDom(source, report, format, body, v, verbose))
            << "\n";
}

}  // namespace fabtrack::cli
