// fabtrack analyze [--cluster NAME] [--since ISO8601] [--format text|json|html]
//                  [--out FILE] [--config FILE] [--textfile FILE] [--no-store]
//                  [--pushgateway URL [--pushgateway-job NAME]
//                   [--pushgateway-label NAME=VALUE]... [--pushgateway-auth-file FILE]]
// Judges the newest night (or the runs since --since) against the history,
// stores the findings, prints or writes the report. Exit status as monitoring
// plugins have it, so cron and Slurm can act on it: 0 nothing at warning or
// above, 1 warning, 2 critical, 3 could not analyze (database, config, no run)
// or could not deliver an output (report, textfile, Pushgateway push). A
// failed output never loses the analysis: the findings are stored before any
// output, a failed textfile or push does not stop the other, and stderr says
// what the analysis found.
#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <optional>
#include <sstream>

#include "analyzer/analyze.h"
#include "analyzer/detector.h"
#include "analyzer/input_index.h"
#include "analyzer/problems.h"
#include "analyzer/report/html_report.h"
#include "analyzer/report/json_report.h"
#include "analyzer/report/prometheus_textfile.h"
#include "analyzer/report/pushgateway.h"
#include "analyzer/report/text_report.h"
#include "analyzer/summarized_history.h"
#include "app/analysis_session.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/huge_page_heap.h"

namespace fabtrack::cli {
namespace {

constexpr int kCouldNotAnalyze = 3;

struct AnalyzeOptions {
  std::optional<std::string> cluster;
  std::optional<std::string> since;
  std::string format = "text";
  std::optional<std::string> out;
  std::optional<std::string> config;
  std::optional<std::string> textfile;
  std::optional<std::string> pushgateway;
  std::string pushgateway_job = "fabtrack_analyze";
  std::vector<std::string> pushgateway_labels;  // NAME=VALUE, grouping labels after the cluster
  std::optional<std::string> pushgateway_auth_file;
  bool no_store = false;
  bool list_detectors = false;
  bool print_config = false;
  bool timing = false;
  bool full_history = false;
  DatabaseOptions database;
};

[[noreturn]] void CannotAnalyze(const std::string& why) {
  std::cerr << "fabtrack analyze: " << why << "\n";
  throw CommandExit{kCouldNotAnalyze};
}

analyzer::AnalyzerConfig LoadConfig(const std::optional<std::string>& path) {
  if (!path) return {};
  std::ifstream in(*path);
  if (!in) CannotAnalyze("cannot read config " + *path);
  std::stringstream text;
  text << in.rdbuf();
  try {
    return analyzer::ParseAnalyzerConfig(text.str(), *path);
  } catch (const analyzer::ConfigError& e) {
    CannotAnalyze(e.what());
  }
}

// --pushgateway, checked before any work so that a typo costs no analysis.
struct PushPlan {
  analyzer::PushgatewayGroup group;  // the cluster label is added once it is known
  std::optional<analyzer::BasicAuth> auth;
};

std::optional<PushPlan> PlanPush(const AnalyzeOptions& o) {
  if (!o.pushgateway) return std::nullopt;
  PushPlan plan;
  try {
    const analyzer::PushgatewayEndpoint endpoint = analyzer::CheckPushgatewayUrl(*o.pushgateway);
    plan.group.base_url = *o.pushgateway;
    if (o.pushgateway_job.empty()) throw analyzer::PushgatewayError("the job name is empty");
    plan.group.job = o.pushgateway_job;
    for (const std::string& label : o.pushgateway_labels) {
      const size_t eq = label.find('=');
      if (eq == std::string::npos) {
        throw analyzer::PushgatewayError("--pushgateway-label wants NAME=VALUE, not " + label);
      }
      const std::string name = label.substr(0, eq);
      // The metrics carry the cluster; as a grouping label it keeps each
      // cluster's push from replacing another's.
      analyzer::CheckGroupingLabelName(name, {"cluster"});
      for (const auto& [seen, value] : plan.group.labels) {
        if (seen == name) throw analyzer::PushgatewayError("label " + name + " given twice");
      }
      plan.group.labels.emplace_back(name, label.substr(eq + 1));
    }
    plan.auth = analyzer::PushgatewayCredentials(o.pushgateway_auth_file, &std::getenv);
    if (o.pushgateway_auth_file) {
      struct stat st {};
      if (stat(o.pushgateway_auth_file->c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
        std::cerr << "fabtrack analyze: warning: " << *o.pushgateway_auth_file
                  << " is readable by other users; chmod 600 it\n";
      }
    }
    if (plan.auth && endpoint.scheme == "http" && !endpoint.loopback) {
      std::cerr << "fabtrack analyze: warning: basic auth over http:// sends the password in "
                   "clear text; use https://\n";
    }
  } catch (const analyzer::PushgatewayError& e) {
    CannotAnalyze(std::string("--pushgateway: ") + e.what());
  }
  return plan;
}

// --timing: where the time goes (load, detect, store, report), on stderr.
class PhaseTimer {
 public:
  explicit PhaseTimer(bool enabled) : enabled_(enabled) {}
  void Mark(const char* phase) {
    if (!enabled_) return;
    auto now = std::chrono::steady_clock::now();
    std::cerr << "fabtrack analyze: " << phase << " "
              << std::chrono::duration<double, std::milli>(now - last_).count() << " ms\n";
    last_ = now;
  }

 private:
  bool enabled_;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

void RunAnalyze(const AnalyzeOptions& o) {
  if (o.list_detectors) {
    for (const analyzer::DetectorInfo& d : analyzer::Detectors()) {
      std::cout << d.name << "\t" << d.summary << "\n";
    }
    return;
  }
  if (o.print_config) {
    std::cout << analyzer::DefaultConfigText();
    return;
  }
  const analyzer::AnalyzerConfig config = LoadConfig(o.config);
  std::optional<PushPlan> push = PlanPush(o);
  PhaseTimer timer(o.timing);
  // The history's rows fill ~100 MB of heap in a second (~250 MB for every
  // row of three years of a 4096-node cluster); in 2 MiB pages that is a
  // quarter fewer CPU-seconds than in 4 KiB ones (core/huge_page_heap.h).
  UseHugePagesForHeap(std::size_t{512} << 20);

  std::optional<app::AnalysisSession> session;
  try {
    session.emplace(o.database, std::cerr);
  } catch (const CommandExit&) {
    throw CommandExit{kCouldNotAnalyze};
  }
  std::string cluster;
  AnalysisInput input;
  try {
    if (o.cluster) {
      cluster = *o.cluster;
    } else {
      std::vector<std::string> clusters = session->ClustersToAnalyze();
      if (clusters.size() != 1) {
        CannotAnalyze(clusters.empty()
                          ? "no runs (or imported port snapshots) stored yet"
                          : "several clusters have runs or snapshots: name one with --cluster");
      }
      cluster = clusters.front();
    }
    // The HTML report draws the history's sizes: it reads every row.
    const bool summarized = !o.full_history && o.format != "html";
    input = session->Load(
        cluster, o.since,
        summarized
            ? [&config](
                  const AnalysisInput& in) { return analyzer::RunsNeedingResults(in, config); }
            : std::function<std::vector<int64_t>(const AnalysisInput&)>());
  } catch (const app::AnalysisUnavailable& e) {
    CannotAnalyze(e.what());
  }

  timer.Mark("load");
  if (o.timing) {
    // Whether tonight reads the summarised history (schema 015) or every row.
    size_t summarised = 0;
    for (const RunView& r : input.runs) summarised += !r.results_loaded;
    std::cerr << "fabtrack analyze: history summarised: result rows of " << summarised << " of "
              << input.runs.size() << " runs left to their stored summaries\n";
  }
  const double judge_from = input.judge_from;
  std::optional<analyzer::InputIndex> index_storage;
  index_storage.emplace(std::move(input));
  // Figures for the summarised history are kept only when stored.
  index_storage->KeepSummaries(!o.no_store);
  AnalysisResult result;
  try {
    result = analyzer::Analyze(*index_storage, config);
  } catch (const analyzer::SummaryMiss& e) {
    // The stored summaries do not cover what a detector asked for (first
    // night after a settings change, a late older run, a new series...):
    // the full history, and its summaries are stored again below.
    if (o.timing)
      std::cerr << "fabtrack analyze: summarised history not usable: " << e.what() << "\n";
    timer.Mark("detect (summarised)");
    try {
      index_storage.emplace(session->Load(cluster, o.since));
      index_storage->KeepSummaries(!o.no_store);
    } catch (const app::AnalysisUnavailable& e) {
      CannotAnalyze(e.what());
    }
    timer.Mark("load (full)");
    result = analyzer::Analyze(*index_storage, config);
  }
  const analyzer::InputIndex& index = *index_storage;
  timer.Mark("detect");
  // Problems again, with the silences of `fabtrack ack` in force now and the
  // stored history: a problem seen on earlier nights is ongoing, from its
  // first night, whatever window was judged (and so say the JSON, the
  // textfile and the alerts that read it).
  try {
    result.problems = analyzer::FoldProblems(result, session->Acks(cluster), UtcNowIso(),
                                             session->History(cluster));
  } catch (const app::AnalysisUnavailable& e) {
    CannotAnalyze(e.what());
  }
  if (result.judged_runs == 0 && result.judged_jobs == 0 && result.judged_port_windows == 0 &&
      result.judged_topologies == 0) {
    CannotAnalyze("cluster " + cluster + " has no run started at or after " +
                  IsoFromSeconds(judge_from, IsoStyle::kSeconds) +
                  ": nothing to judge (did the nightly sweep run?)");
  }
  if (!o.no_store) {
    try {
      app::StoredAnalysis stored = session->Store(index.input(), result);
      std::cerr << "fabtrack analyze: findings stored: " << stored.opened << " new, "
                << stored.refreshed << " still open, " << stored.resolved << " resolved\n";
      // What tonight's analysis derived per run: tomorrow's summarised history.
      session->StoreSummaries(index.input(), index.produced());
    } catch (const app::AnalysisUnavailable& e) {
      CannotAnalyze(e.what());
    }
  }

  timer.Mark("store");
  std::string report;
  if (o.format == "json") {
    report = analyzer::AnalysisJson(result).dump(2, ' ', false,
                                                 nlohmann::json::error_handler_t::replace) +
             "\n";
  } else if (o.format == "html") {
    report = analyzer::RenderHtmlReport(index, result);
  } else {
    report = analyzer::TextReport(result, IsoFromSeconds(judge_from, IsoStyle::kSeconds));
  }
  try {
    if (o.out) {
      WriteFileAtomically(*o.out, report);
      std::cerr << "fabtrack analyze: report written to " << *o.out << "\n";
    } else {
      std::cout << report;
    }
  } catch (const std::runtime_error& e) {
    CannotAnalyze(e.what());
  }

  // The textfile and the push carry the same exposition, rendered once: one
  // renderer, and both say the same analysis time.
  bool delivered = true;
  if (o.textfile || push) {
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string metrics = analyzer::PrometheusTextfile(
        index, result, now, [&](const std::string& k, const std::string& s) {
          return FindingFingerprint(cluster, k, s);
        });
    // Each output is tried even when the one before failed: the textfile and
    // the push are alternative routes to Alertmanager.
    if (o.textfile) {
      try {
        WriteFileAtomically(*o.textfile, metrics);
      } catch (const std::runtime_error& e) {
        std::cerr << "fabtrack analyze: " << e.what() << "\n";
        delivered = false;
      }
    }
    if (push) {
      push->group.labels.insert(push->group.labels.begin(), {"cluster", cluster});
      try {
        analyzer::PushToGateway(push->group, push->auth, metrics);
        std::cerr << "fabtrack analyze: pushed to " << analyzer::PushgatewayGroupUrl(push->group)
                  << "\n";
      } catch (const analyzer::PushgatewayError& e) {
        std::cerr << "fabtrack analyze: Pushgateway push failed: " << e.what() << "\n";
        delivered = false;
      }
    }
  }
  timer.Mark("report");
  const int status = ExitStatusOf(result);
  if (!delivered) {
    // 3, as for a report that could not be written: the job did not do all it
    // was asked. The analysis itself is not lost, and the log says so.
    std::cerr << "fabtrack analyze: "
              << (o.no_store ? "findings not stored (--no-store)" : "the findings are stored")
              << " and the report is written; the analysis status is " << status << " ("
              << (status == 0   ? "ok"
                  : status == 1 ? "warning"
                                : "critical")
              << "), but an output failed: exit 3\n";
    throw CommandExit{kCouldNotAnalyze};
  }
  throw CommandExit{status};
}

}  // namespace

void SetupAnalyze(CLI::App& app) {
  auto o = std::make_shared<AnalyzeOptions>();
  CLI::App* analyze = app.add_subcommand(
      "analyze",
      "Judge the newest night against the history; exit 0 ok, 1 warning, 2 critical, 3 could "
      "not analyze or an output (report, textfile, Pushgateway) failed");
  analyze->add_option("--cluster", o->cluster, "cluster to analyze (default: the only one)")
      ->check(NameValue());
  // Checked before any database work: PostgreSQL's own words for a bad
  // timestamp name neither the flag nor the forms it takes; a --since ahead
  // of the clock would judge nothing.
  OperatorTimeRules since;
  since.refuse_far_future = true;
  analyze
      ->add_option("--since", o->since,
                   "judge runs started at or after this time (RFC 3339 or a date; default: the "
                   "newest night, from 12:00 UTC before the newest run)")
      ->transform(OperatorTimeValue(since));
  AddFormatOption(analyze, &o->format, {"text", "json", "html"});
  analyze->add_option("--out", o->out, "write the report to FILE (atomically) instead of stdout");
  analyze->add_option("--config", o->config,
                      "detector thresholds (see --print-config for every setting)");
  analyze->add_option("--textfile", o->textfile,
                      "also write the findings and headline figures for node_exporter's "
                      "textfile collector (e.g. /var/lib/prometheus/node-exporter/fabtrack.prom)");
  CLI::Option* pushgateway =
      analyze->add_option("--pushgateway", o->pushgateway,
                          "also PUT the textfile's metrics to this Prometheus Pushgateway "
                          "(http[s]://HOST:PORT), as the group job/cluster[/labels]: each push "
                          "replaces the group, so resolved findings disappear. A failed push "
                          "exits 3; the findings are stored all the same. Basic auth: from the "
                          "environment (FABTRACK_PUSHGATEWAY_USER and "
                          "FABTRACK_PUSHGATEWAY_PASSWORD) or --pushgateway-auth-file, never the "
                          "URL");
  analyze
      ->add_option("--pushgateway-job", o->pushgateway_job,
                   "the Pushgateway job label (default: fabtrack_analyze)")
      ->needs(pushgateway);
  analyze
      ->add_option("--pushgateway-label", o->pushgateway_labels,
                   "NAME=VALUE: a further grouping label after job and cluster (repeatable), "
                   "e.g. instance=$(hostname) or site=dc1")
      ->needs(pushgateway);
  analyze
      ->add_option("--pushgateway-auth-file", o->pushgateway_auth_file,
                   "basic-auth credentials for the Pushgateway: a file (mode 600) whose first "
                   "line is USER:PASSWORD; overrides the environment variables")
      ->needs(pushgateway);
  analyze->add_flag("--no-store", o->no_store, "do not record findings in the database");
  analyze->add_flag("--list-detectors", o->list_detectors, "list the detectors and exit");
  analyze->add_flag("--print-config", o->print_config, "print every setting with its default");
  analyze->add_flag("--timing", o->timing, "print how long each phase took (stderr)");
  analyze->add_flag("--full-history", o->full_history,
                    "read every result row of the history instead of the per-run summaries "
                    "that stored analyses keep (the findings are the same)");
  AddDatabaseOptions(analyze, &o->database);
  analyze->callback([o] { RunAnalyze(*o); });
}

}  // namespace fabtrack::cli
