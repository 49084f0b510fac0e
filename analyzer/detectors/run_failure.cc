// run_failure (critical): the run itself failed, whatever its numbers say. A
// benchmark that reports wrong results, died mid-sweep or never printed a row
// says nothing about the fabric's speed and everything about its health, so
// it is never "OK":
//   - nccl-tests' "# Out of bounds values : N FAILED", or #wrong > 0 at a size;
//   - "Test NCCL failure common.cu:..." / "NCCL error" lines of nccl-tests;
//   - a run that stopped before its last size (status partial or failed), or a
//     header-only run that never printed a result row;
//   - NCCL WARN lines, grouped by kind (IB completion errors have their own
//     detector, ib_completion_error). WARN lines alone, in a run that
//     completed with correct results, are a warning: NCCL warns about things
//     it then works around.
// The finding names the host when the failure lines name one, and carries
// the log line numbers as evidence.
#include <map>
#include <set>

#include "analyzer/detector.h"
#include "analyzer/log_events.h"
#include "analyzer/run_facts.h"

namespace fabtrack::analyzer::run_failure_detector {
namespace {

struct Group {
  int count = 0;
  std::vector<int> lines;
  std::set<std::string> hosts;
  std::string first_text;
};

void Add(Group* g, const LogEventView& e) {
  if (g->count++ == 0) g->first_text = e.text;
  if (e.line && g->lines.size() < 20) g->lines.push_back(*e.line);
  if (e.host) g->hosts.insert(*e.host);
}

nlohmann::json GroupJson(const std::string& name, const Group& g) {
  return {{"kind", name},
          {"count", g.count},
          {"lines", g.lines},
          {"hosts", std::vector<std::string>(g.hosts.begin(), g.hosts.end())},
          {"first", g.first_text}};
}

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const RunView* run : input.judged()) {
    std::vector<std::string> reasons;  // the message, most telling first
    nlohmann::json evidence = nlohmann::json::object();
    bool failed = false;  // critical; otherwise the WARN lines alone make a warning
    std::set<std::string> hosts;

    std::map<std::string, Group> test_failures, warnings;
    for (const LogEventView& e : input.LogEvents(run->id)) {
      const LogEventReading r = ReadLogEvent(e);
      if (r.kind == LogEventKind::kTestFailure) {
        Add(&test_failures[r.group], e);
      } else if (r.kind == LogEventKind::kWarning) {
        Add(&warnings[r.group], e);
      }
    }
    if (!test_failures.empty()) {
      failed = true;
      nlohmann::json list = nlohmann::json::array();
      for (const auto& [name, g] : test_failures) {
        list.push_back(GroupJson(name, g));
        hosts.insert(g.hosts.begin(), g.hosts.end());
      }
      const Group& first = test_failures.begin()->second;
      reasons.push_back(
          "the test failed: \"" + first.first_text + "\"" +
          (first.lines.empty() ? "" : " (line " + std::to_string(first.lines[0]) + ")"));
      evidence["test_failures"] = list;
    }
    if (run->oob_ok == false) {
      failed = true;
      reasons.push_back("nccl-tests found wrong results: Out of bounds values " +
                        (run->oob_count ? std::to_string(*run->oob_count) + " " : std::string()) +
                        "FAILED");
      evidence["oob_count"] = run->oob_count ? nlohmann::json(*run->oob_count) : nlohmann::json();
    }
    nlohmann::json wrong = nlohmann::json::array();
    int64_t wrong_total = 0;
    const auto results = input.Results(run->id);
    for (const ResultPoint& p : results) {
      if (p.wrong && *p.wrong > 0) {
        wrong.push_back({{"size_bytes", p.size_bytes}, {"wrong", *p.wrong}});
        wrong_total += *p.wrong;
      }
    }
    if (!wrong.empty()) {
      failed = true;
      if (run->oob_ok != false) {
        reasons.push_back("#wrong > 0 at " + std::to_string(wrong.size()) + " size(s) (" +
                          std::to_string(wrong_total) + " wrong elements)");
      }
      evidence["wrong"] = wrong;
    }
    // Step-mode and log-only runs have no per-size rows by design.
    const bool has_table = run->source == "nccl-tests" || run->source == "fabtrack-allreduce";
    if (has_table && !input.Step(run->id) && results.empty()) {
      failed = true;
      reasons.push_back("the run printed its header and no result row");
      evidence["rows"] = 0;
    } else if (run->status == "partial" || (run->status == "failed" && run->oob_ok != false)) {
      failed = true;
      const std::string last =
          results.empty() ? std::string("no size") : FormatBytes(results.back().size_bytes);
      reasons.push_back("the run stopped before its last size (status " + run->status +
                        ", last size " + last + ")");
    }
    evidence["status"] = run->status;
    if (!warnings.empty()) {
      nlohmann::json list = nlohmann::json::array();
      int count = 0;
      for (const auto& [name, g] : warnings) {
        list.push_back(GroupJson(name, g));
        count += g.count;
        hosts.insert(g.hosts.begin(), g.hosts.end());
      }
      reasons.push_back("NCCL warned " + std::to_string(count) + " time(s) (" +
                        std::to_string(warnings.size()) + " kind(s), first: \"" +
                        warnings.begin()->second.first_text + "\")");
      evidence["nccl_warnings"] = list;
    }
    if (reasons.empty()) continue;
    Finding f =
        FindingForRun(*run, SeriesName(*run), failed ? Severity::kCritical : Severity::kWarning);
    if (hosts.size() == 1) f.host = *hosts.begin();
    f.value = static_cast<double>(reasons.size());
    f.unit = "failure signs";
    f.message = failed ? "run failed: " : "run completed but NCCL warned: ";
    for (size_t i = 0; i < reasons.size(); ++i) f.message += (i ? "; " : "") + reasons[i];
    if (hosts.size() > 1) {
      evidence["hosts"] = std::vector<std::string>(hosts.begin(), hosts.end());
    }
    f.evidence = std::move(evidence);
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "run_failure",
    .summary = "failed runs: wrong results, test failures, stopped early or no row (critical); "
               "NCCL WARN lines (warning)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::run_failure_detector
