// locate_suspect (warning; critical when `fabtrack locate` settled on a
// strong suspect): a locate stored in the judged window named a slow node,
// link or uplink (issue 20). One finding per top suspect, tied to the runs
// the locate was run for (the night's flagged runs, or its sweep), with the
// whole ranked verdict as evidence. A locate that found no fault raises
// nothing; a later night that judges runs without a locate naming the same
// suspect resolves it.
#include "analyzer/detector.h"
#include "analyzer/locate/locate.h"

namespace fabtrack::analyzer::locate_suspect_detector {
namespace {

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const LocateView& v : input.input().locate_verdicts) {
    const LocateRecord& r = v.record;
    if (v.located_at < input.input().judge_from || r.verdict.suspects.empty()) continue;
    const LocateSuspect& top = r.verdict.suspects.front();
    Finding f;
    f.kind = "locate_suspect";
    f.severity = r.exit_status >= 2 ? Severity::kCritical : Severity::kWarning;
    f.subject = top.kind + " " + top.name;
    // The newest linked run this analysis knows.
    for (auto id = r.run_ids.rbegin(); id != r.run_ids.rend(); ++id) {
      if (const RunView* run = input.Run(*id)) {
        f.run_id = run->id;
        f.run_started_at = run->started_at_iso;
        break;
      }
    }
    f.nodes = static_cast<int>(r.hosts.size());
    if (top.kind == "node") f.host = top.name;
    f.value = top.score;
    f.unit = "robust z";
    f.message = "fabtrack locate over " + std::to_string(r.hosts.size()) + " nodes (" +
                std::to_string(r.verdict.rounds) + " rounds, " +
                std::to_string(static_cast<int>(r.seconds + 0.5)) +
                " s): " + DescribeLocateVerdict(r.verdict, r.budget_spent);
    nlohmann::json suspects = nlohmann::json::array();
    for (const LocateSuspect& s : r.verdict.suspects) {
      suspects.push_back(
          {{"kind", s.kind}, {"name", s.name}, {"score", s.score}, {"evidence", s.evidence}});
    }
    f.evidence = {{"locate_verdict_id", v.id},    {"located_at", r.located_at},
                  {"rounds", r.verdict.rounds},   {"seconds", r.seconds},
                  {"settled", r.verdict.settled}, {"budget_spent", r.budget_spent},
                  {"suspects", suspects},         {"run_ids", r.run_ids}};
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "locate_suspect",
    .summary = "a stored `fabtrack locate` verdict named a slow node, link or uplink (warning; "
               "critical when settled on a strong suspect)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::locate_suspect_detector
