#include "app/ras_watch_flow.h"

#include <chrono>
#include <fstream>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

#include "analyzer/ras_watch.h"
#include "app/database_access.h"
#include "collector/ras/ras_report.h"
#include "collector/ras/ras_snapshot.h"
#include "core/clock.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "store/ras_store.h"

namespace fabtrack::app {
namespace {

constexpr int kExitNoVerdict = 3;
// Snapshots a watch keeps in memory: a day at --every 60.
constexpr size_t kSnapshotsKept = 1440;

// One query, read as JSON where RAS offers it, as text otherwise or when
// the JSON cannot be read. Throws ras::QueryError.
ras::Report Ask(const ras::QueryOptions& options, std::ostream& err) {
  ras::QueryOptions q = options;
  q.json = true;
  ras::Reply reply = ras::Query(q);
  if (reply.format == "json") {
    ras::Report report = ras::ParseRasJson(reply.body);
    if (report.complete) return report;
    err << "fabtrack ras watch: the JSON report could not be read ("
        << (report.problems.empty() ? "?" : report.problems.front())
        << "); asking for the text report\n";
    q.json = false;
    reply = ras::Query(q);
  }
  return ras::ParseRasText(reply.body);
}

// Waits until `until` in short steps, so that Ctrl-C ends the watch at once.
void SleepUntil(std::chrono::steady_clock::time_point until) {
  while (std::chrono::steady_clock::now() < until) {
    ThrowIfInterrupted();
    auto left = until - std::chrono::steady_clock::now();
    std::this_thread::sleep_for(
        std::min<std::chrono::steady_clock::duration>(left, std::chrono::milliseconds(100)));
  }
}

bool AllFinalized(const RasSnapshot& s) {
  if (s.communicators.empty()) return false;
  for (const RasCommState& c : s.communicators) {
    if (c.state != "FINALIZE" && c.state != "ABORT") return false;
  }
  return true;
}

}  // namespace

RasWatchResult WatchRas(const RasWatchRequest& request, const RasWatchProgress& progress,
                        std::ostream& err) {
  // What names the job's nodes: the hosts file first (Slurm's node list made
  // into one by the helper script), then the resolver for the rest.
  std::map<std::string, std::string> host_of;
  if (request.hosts_file) {
    std::ifstream in(*request.hosts_file);
    if (!in) {
      err << "fabtrack ras watch: cannot read the hosts file " << *request.hosts_file << "\n";
      throw CommandExit{kExitNoVerdict};
    }
    std::stringstream text;
    text << in.rdbuf();
    ras::HostsFile hosts = ras::ParseHostsFile(text.str(), *request.hosts_file);
    if (!hosts.problems.empty()) {
      for (const std::string& p : hosts.problems) err << "fabtrack ras watch: " << p << "\n";
      throw CommandExit{kExitNoVerdict};
    }
    host_of = std::move(hosts.host_of);
  }
  // The database before the first query: snapshots are not taken for nothing.
  auto connection = OpenDatabaseOrExit(request.database, SchemaPolicy::kRequireCurrent, err);
  LimitReadTime(*connection);

  RasWatchResult result;
  std::map<std::string, bool> looked_up;  // address -> found
  std::string first_taken_at;
  auto started = std::chrono::steady_clock::now();
  auto every = std::chrono::milliseconds(static_cast<int64_t>(request.every_s * 1000));
  try {
    for (int i = 1;; ++i) {
      ThrowIfInterrupted();
      auto tick = started + every * (i - 1);
      SleepUntil(tick);
      ras::Report report;
      try {
        report = Ask(request.query, err);
      } catch (const ras::QueryError& e) {
        if (progress.no_answer) progress.no_answer(e.what());
        result.ended = "no answer";
        break;
      }
      RasSnapshot s;
      s.cluster = request.cluster;
      s.job_id = request.job_id;
      s.taken_at = UtcNowIso();
      s.taken_at_s = *ParseIsoSeconds(s.taken_at);
      s.report_format = report.format;
      s.nccl_version = report.nccl_version;
      s.health = ras::HealthLabel(ras::Judge(report).health);
      s.communicators = ras::CommunicatorsOf(report);
      for (const std::string& node : ras::NodesOf(s.communicators)) {
        if (host_of.count(node) || looked_up.count(node)) continue;
        std::optional<std::string> host = request.resolve ? ras::LookUpHost(node) : std::nullopt;
        looked_up[node] = host.has_value();
        if (host) host_of[node] = *host;
      }
      ras::MapHosts(host_of, &s.communicators);
      {
        pqxx::work txn(*connection);
        store::WriteRasSnapshot(txn, s);
        txn.commit();
      }
      if (first_taken_at.empty()) first_taken_at = s.taken_at;
      result.snapshots.push_back(std::move(s));
      // A watch of a long job keeps its newest snapshots in memory (all are
      // stored): the verdict looks at the unbroken runs up to the newest.
      if (result.snapshots.size() > kSnapshotsKept)
        result.snapshots.erase(result.snapshots.begin());
      const RasSnapshot& last = result.snapshots.back();
      if (progress.snapshot) progress.snapshot(i, last);
      RasWatchVerdict so_far = analyzer::JudgeRasWatch(result.snapshots);
      if (request.count > 0 && i >= request.count) {
        result.ended = "count";
        break;
      }
      if (request.count == 0 && so_far.Stuck()) {
        result.ended = "stuck";  // a hung job does not end by itself
        break;
      }
      if (request.count == 0 && AllFinalized(last)) {
        result.ended = "finalized";
        break;
      }
      if (request.max_duration_s > 0 &&
          std::chrono::steady_clock::now() + every - started >
              std::chrono::milliseconds(static_cast<int64_t>(request.max_duration_s * 1000))) {
        result.ended = "duration";
        break;
      }
    }
    if (result.snapshots.empty()) {
      err << "fabtrack ras watch: no snapshot of job " << request.job_id << " was taken\n";
      throw CommandExit{kExitNoVerdict};
    }
    result.verdict = analyzer::JudgeRasWatch(result.snapshots);
    result.verdict.first_taken_at = first_taken_at;
    // The ranks' hosts' port counters over the watch (and the sample before).
    std::set<std::string> hosts;
    std::set<std::string> unmapped;
    for (const RasSnapshot& s : result.snapshots) {
      for (const std::string& node : ras::NodesOf(s.communicators)) {
        auto it = host_of.find(node);
        if (it != host_of.end()) {
          hosts.insert(it->second);
        } else {
          unmapped.insert(node);
        }
      }
    }
    result.unmapped_nodes.assign(unmapped.begin(), unmapped.end());
    pqxx::work txn(*connection);
    std::vector<HostPortReading> readings =
        store::ReadHostPortReadings(txn, request.cluster, {hosts.begin(), hosts.end()},
                                    first_taken_at, result.snapshots.back().taken_at);
    analyzer::AttachPortChanges(readings, &result.verdict);
    store::RasVerdictWrite w =
        store::WriteRasJobVerdict(txn, request.cluster, request.job_id, result.verdict);
    txn.commit();
    result.first_stuck = w.first_stuck;
    result.first_stuck_at = w.first_stuck_at;
  } catch (const pqxx::failure& e) {
    err << "fabtrack ras watch: the database failed: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return result;
}

}  // namespace fabtrack::app
