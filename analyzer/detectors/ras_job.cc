// ras_job (critical when stuck or ranks died; warning for laggards): a real
// job `fabtrack ras watch` judged in the window (issue 34). Subject "job
// <id>": kind stuck_job when a communicator of the job stopped advancing,
// job_ranks otherwise (dead, unresponsive, missing or lagging ranks, processes
// RAS's event stream declared dead), with the
// ranks by host, GPU and pid and their hosts' port counter changes in the
// message and evidence. Seen when the watch's newest snapshot was taken, so
// that a job that hangs at night is a problem in the next morning's report.
#include <set>

#include "analyzer/detector.h"

namespace fabtrack::analyzer::ras_job_detector {
namespace {

std::string RankText(const RasWatchRank& k) {
  // A process RAS's event stream declared dead has no rank of its own.
  std::string s = (k.rank < 0 ? "process " + (k.pid ? std::to_string(*k.pid) : std::string("?"))
                              : "rank " + std::to_string(k.rank)) +
                  " on " + (k.host.empty() ? k.node : k.host);
  if (!k.gpu.empty()) s += " GPU " + k.gpu;
  if (!k.nic.empty()) s += " NIC " + k.nic;
  return s;
}

void Detect(const InputIndex& input, const DetectorSettings&, std::vector<Finding>* findings) {
  for (const RasJobView& job : input.input().ras_jobs) {
    if (job.judged_at < input.input().judge_from || job.verdict.health == "healthy") continue;
    const RasWatchVerdict& v = job.verdict;
    Finding f;
    f.kind = v.Stuck() ? "stuck_job" : "job_ranks";
    f.severity = v.health == "critical" ? Severity::kCritical : Severity::kWarning;
    f.subject = "job " + job.job_id;
    f.run_started_at = v.last_taken_at;
    std::set<std::string> hosts;
    std::string what;
    // The findings that make it: stuck first, then dead and the rest.
    for (const char* kind :
         {"stuck", "peer_dead", "dead", "unresponsive", "missing", "error", "aborted", "laggard"}) {
      for (const RasWatchFinding& w : v.findings) {
        if (w.kind != kind) continue;
        if (!what.empty()) what += "; ";
        what += w.kind + " " + w.communicator + " since " + w.since + ": " + w.message;
        std::string ranks;
        for (size_t i = 0; i < w.ranks.size() && i < 5; ++i) {
          ranks += (i ? ", " : "") + RankText(w.ranks[i]);
          if (!w.ranks[i].host.empty()) hosts.insert(w.ranks[i].host);
        }
        if (w.ranks.size() > 5) ranks += " and " + std::to_string(w.ranks.size() - 5) + " more";
        if (!ranks.empty()) what += " (" + ranks + ")";
        for (size_t i = 0; i < w.port_changes.size() && i < 3; ++i) {
          what += "; " + w.port_changes[i];
        }
        for (size_t i = 0; i < w.node_facts.size() && i < 3; ++i) {
          what += "; " + w.node_facts[i];
        }
      }
    }
    if (hosts.size() == 1) f.host = *hosts.begin();
    f.nodes = static_cast<int>(hosts.size());
    f.message = "NCCL RAS over " + std::to_string(v.snapshots) + " snapshots of job " + job.job_id +
                " (" + v.first_taken_at + " .. " + v.last_taken_at + "): " + what;
    f.evidence = {{"job_id", job.job_id}, {"verdict", RasWatchVerdictJson(v)}};
    if (job.first_stuck_at) f.evidence["first_stuck_at"] = *job.first_stuck_at;
    findings->push_back(std::move(f));
  }
}

const DetectorRegistrar kRegistered({
    .name = "ras_job",
    .summary = "a real job `fabtrack ras watch` judged: stuck communicators (stuck_job, "
               "critical), dead or lagging ranks by host and GPU (job_ranks)",
    .params = {},
    .detect = Detect,
});

}  // namespace
}  // namespace fabtrack::analyzer::ras_job_detector
