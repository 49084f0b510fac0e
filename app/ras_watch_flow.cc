#include "app/ras_watch_flow.h"

#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <optional>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <thread>

#include "analyzer/ras_node_facts.h"
#include "analyzer/ras_watch.h"
#include "app/batch_store.h"
#include "app/database_access.h"
#include "collector/ras/ras_monitor.h"
#include "collector/ras/ras_monitor_client.h"
#include "collector/ras/ras_report.h"
#include "collector/ras/ras_snapshot.h"
#include "core/clock.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "core/ras_watch_record.h"
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

// RAS's event stream beside the polls (NCCL >= 2.29). Read only between
// the polls, in waits no longer than the time to the next one: the stream
// never delays a snapshot, and an event that comes during a query waits in
// the socket until the query is done (at most --timeout).
class EventStream {
 public:
  // Called with each event read (its received_at set); returns whether the
  // watch should end now (a PEER_DEAD).
  using Handler = std::function<bool(RasEvent&)>;
  EventStream(const RasWatchProgress& progress, RasWatchResult* result)
      : progress_(progress), result_(result) {}

  void Open(const ras::QueryOptions& query) {
    ras::MonitorConnection::Opening opening;
    try {
      // Lifecycle and trace: PEER_DEAD, and the RAS network's view of its
      // peers before that (unresponsive, keep-alive timeouts, retries).
      conn_ = ras::MonitorConnection::Open(query, "all", &opening);
    } catch (const ras::QueryError& e) {
      result_->monitor = "failed";
      Say(std::string("events not available (") + e.what() + "); polling only");
      return;
    }
    if (!conn_) {
      result_->monitor = "not offered";
      Say("RAS at " + query.host + ":" + std::to_string(query.port) +
          " does not stream events (it answered \"" + opening.refusal +
          "\" to MONITOR: NCCL before 2.29); polling only");
      return;
    }
    result_->monitor = "streaming";
    parser_.emplace(opening.format);
  }

  // Waits until `until` (Ctrl-C within 100 ms), reading events as they come;
  // true when `handle` asked to end the watch.
  bool WaitUntil(std::chrono::steady_clock::time_point until, const Handler& handle) {
    for (;;) {
      ThrowIfInterrupted();
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          until - std::chrono::steady_clock::now());
      if (left.count() <= 0) return false;
      auto step = std::min<std::chrono::milliseconds>(left, std::chrono::milliseconds(100));
      if (!conn_) {
        std::this_thread::sleep_for(step);
        continue;
      }
      if (Read(static_cast<int>(step.count()), handle)) return true;
    }
  }

  // What came during the last query, without waiting.
  bool Drain(const Handler& handle) {
    for (int i = 0; i < 64 && conn_; ++i) {
      if (Read(0, handle)) return true;
      if (!got_data_) return false;
    }
    return false;
  }

 private:
  bool Read(int timeout_ms, const Handler& handle) {
    got_data_ = false;
    data_.clear();
    ras::MonitorBatch batch;
    ras::MonitorConnection::Got got = conn_->Read(timeout_ms, &data_);
    if (got == ras::MonitorConnection::Got::kData) {
      got_data_ = true;
      parser_->Feed(data_, &batch);
    } else if (got == ras::MonitorConnection::Got::kClosed) {
      parser_->Finish(&batch);
      conn_.reset();
      result_->monitor = "closed";
      Say("RAS closed its event stream (the process ended?); polling goes on");
    }
    for (const std::string& p : batch.problems) Say("event stream: " + p);
    bool end = false;
    for (RasEvent& e : batch.events) {
      e.received_at = UtcNowIso();
      end |= handle(e);
    }
    return end;
  }

  void Say(const std::string& what) {
    if (progress_.notice) progress_.notice(what);
  }

  const RasWatchProgress& progress_;
  RasWatchResult* result_;
  std::unique_ptr<ras::MonitorConnection> conn_;
  std::optional<ras::MonitorParser> parser_;
  std::string data_;
  bool got_data_ = false;
};

// A long watch's database that went away, tried again at most once a
// minute from when it was found away (the failed connect at the start, the
// write that failed) or last tried.
class Reconnects {
 public:
  explicit Reconnects(BatchStore& database) : database_(database) { Note(); }

  void Note() {
    if (database_.connected()) {
      away_since_.reset();
    } else if (!away_since_) {
      away_since_ = std::chrono::steady_clock::now();
    }
  }

  void TryIfDue() {
    Note();
    if (!away_since_ || std::chrono::steady_clock::now() - *away_since_ < kEvery) return;
    database_.Reconnect();
    away_since_.reset();
    Note();  // still away: the next try a minute after this one ended
  }

 private:
  static constexpr std::chrono::seconds kEvery{60};
  BatchStore& database_;
  std::optional<std::chrono::steady_clock::time_point> away_since_;
};

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
  // The database before the first query: a misconfiguration is said now
  // (snapshots are not taken for nothing). While it is away (an outage) the
  // watch goes on: what it takes goes to the spool, bound to that database.
  // It is tried again at most once a minute (a connect to a server that does
  // not answer waits connect_timeout, and a batch waits for it), and once
  // more before the verdict: a reconnect replays the spool first, so what
  // was spooled is stored before what comes after it. Still away at the
  // end: the verdict is made from this watch alone.
  BatchStore database(request.database, err);
  database.ExitIfMisconfigured();
  Reconnects reconnects(database);
  // Stored in one transaction, or spooled: false when spooled.
  auto keep = [&](RasWatchRecord record) {
    record.cluster = request.cluster;
    record.job_id = request.job_id;
    std::vector<store::SpoolBatch> batches(1);
    batches[0].kind = store::SpoolBatch::Kind::kRas;
    batches[0].ras = std::move(record);
    reconnects.TryIfDue();
    StoreOutcome outcome = database.Store(std::move(batches));
    reconnects.Note();  // a write that failed dropped the connection: a minute from now
    return outcome;
  };

  RasWatchResult result;
  std::map<std::string, bool> looked_up;  // address -> found
  std::string first_taken_at;
  auto map_host = [&](const std::string& node) -> std::string {
    if (node.empty()) return "";
    if (!host_of.count(node) && !looked_up.count(node)) {
      std::optional<std::string> host = request.resolve ? ras::LookUpHost(node) : std::nullopt;
      looked_up[node] = host.has_value();
      if (host) host_of[node] = *host;
    }
    auto it = host_of.find(node);
    return it == host_of.end() ? "" : it->second;
  };
  EventStream stream(progress, &result);
  std::string newest_event_at;
  std::vector<RasEvent> watch_events;  // this watch's, for a verdict without the database
  // Each event stored as it comes; a PEER_DEAD ends the watch.
  EventStream::Handler on_event = [&](RasEvent& e) {
    e.host = map_host(e.node);
    keep({.events = {e}});
    watch_events.push_back(e);
    ++result.events;
    newest_event_at = e.received_at;
    if (progress.event) progress.event(e);
    return e.event == "PEER_DEAD";
  };
  auto started = std::chrono::steady_clock::now();
  auto every = std::chrono::milliseconds(static_cast<int64_t>(request.every_s * 1000));
  try {
    for (int i = 1;; ++i) {
      ThrowIfInterrupted();
      auto tick = started + every * (i - 1);
      if (stream.WaitUntil(tick, on_event)) {
        result.ended = "peer dead";  // named at once: the job will not recover by itself
        break;
      }
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
      for (const std::string& node : ras::NodesOf(s.communicators)) map_host(node);
      ras::MapHosts(host_of, &s.communicators);
      keep({.snapshots = {s}});
      if (first_taken_at.empty()) first_taken_at = s.taken_at;
      result.snapshots.push_back(std::move(s));
      // A watch of a long job keeps its newest snapshots in memory (all are
      // stored): the verdict looks at the unbroken runs up to the newest.
      if (result.snapshots.size() > kSnapshotsKept)
        result.snapshots.erase(result.snapshots.begin());
      const RasSnapshot& last = result.snapshots.back();
      if (progress.snapshot) progress.snapshot(i, last);
      // The event stream from the first answer on: a RAS that answers is
      // asked once whether it streams.
      if (i == 1 && request.monitor) {
        // A RAS answers MONITOR at once, yes or no; one that says nothing
        // (a peer that ignores commands it does not know) must not hold the
        // next snapshot for a whole --timeout.
        ras::QueryOptions monitor_query = request.query;
        monitor_query.deadline_s =
            std::min(request.query.deadline_s, std::max(1.0, request.every_s));
        stream.Open(monitor_query);
      }
      if (stream.Drain(on_event)) {
        result.ended = "peer dead";
        break;
      }
      if (request.count > 0 && i >= request.count) {
        result.ended = "count";
        break;
      }
      // Judged between snapshots only where a stuck job ends the watch
      // (--until-done): a watch of --count snapshots is judged once, at the
      // end (each judging of a 10^5-rank job is a tenth of its time).
      if (request.count == 0 && analyzer::JudgeRasWatch(result.snapshots).Stuck()) {
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
    // Once more before the verdict, however recent the last try: a watch
    // whose database came back stores its verdict, reads the events and port
    // counters stored and knows whether the alert is new (the spool, with
    // this watch's snapshots and events, replayed first).
    database.Reconnect();
    // Every event stored with the job, this watch's and earlier ones'; only
    // this watch's while the database is away.
    std::vector<RasEvent> events;
    if (!database.Read([&](pqxx::transaction_base& txn) {
          events = store::ReadRasEvents(txn, request.cluster, request.job_id, 10000);
        })) {
      events = watch_events;
    }
    result.verdict = analyzer::JudgeRasWatch(result.snapshots, events);
    result.verdict.first_taken_at = first_taken_at;
    // RAS's text report (NCCL < 2.28.7, no SET FORMAT json) prints counts
    // only where ranks disagree: a communicator frozen with every rank at one
    // count reads like a healthy one. Not a finding (nothing is known wrong),
    // but the watch must not pass for having looked.
    if (result.snapshots.back().report_format == "text" && !result.verdict.Stuck() &&
        progress.notice) {
      progress.notice(
          "the text report (NCCL < 2.28.7) gives collective counts only where ranks disagree: a "
          "communicator frozen with every rank at one count is not seen (NCCL >= 2.28.7 answers "
          "in JSON, with every rank's counts)");
    }
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
    for (const RasEvent& e : events) {
      if (!e.host.empty()) {
        hosts.insert(e.host);
      } else if (!e.node.empty()) {
        unmapped.insert(e.node);
      }
    }
    result.unmapped_nodes.assign(unmapped.begin(), unmapped.end());
    std::string window_end = std::max(result.snapshots.back().taken_at, newest_event_at);
    std::vector<HostPortReading> readings;
    RasHostKnowledge known;
    std::set<std::string> named;  // the hosts of the ranks the verdict names
    for (const RasWatchFinding& f : result.verdict.findings) {
      for (const RasWatchRank& k : f.ranks) {
        if (!k.host.empty()) named.insert(k.host);
      }
    }
    result.port_counters_read = database.Read([&](pqxx::transaction_base& txn) {
      readings = store::ReadHostPortReadings(txn, request.cluster, {hosts.begin(), hosts.end()},
                                             first_taken_at, window_end);
      known = store::ReadRasHostKnowledge(txn, request.cluster, {hosts.begin(), hosts.end()},
                                          {named.begin(), named.end()}, window_end);
    });
    analyzer::AttachPortChanges(readings, &result.verdict);
    analyzer::AttachNodeFacts(known, readings, hosts, &result.verdict);
    StoreOutcome stored = keep({.verdict = result.verdict});
    result.verdict_stored = stored.stored;
    if (stored.stored) {
      const store::AppliedBatch& w = stored.applied.front();
      result.first_stuck = w.ras_first_stuck;
      result.first_stuck_at = w.ras_first_stuck_at;
      result.first_peer_dead = w.ras_first_peer_dead;
      result.first_peer_dead_at = w.ras_first_peer_dead_at;
    }
  } catch (const Interrupted&) {
    // Ctrl-C or SIGTERM: what the watch spooled before it is said, as at the
    // end of a watch (each snapshot and event is a batch of its own, stored
    // or spooled whole; the verdict was not made), then 130 or 143.
    try {
      database.Finish();
    } catch (const CommandExit&) {
      // a misconfiguration met mid-watch: said; the interrupt's code wins
    }
    throw;
  } catch (const BatchRefused& e) {
    err << "fabtrack ras watch: the database refused what the watch took: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  } catch (const pqxx::failure& e) {
    err << "fabtrack ras watch: the database failed: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  // An outage: one warning line (what was spooled, where); a
  // misconfiguration met mid-watch: exit 3, the data kept.
  database.Finish();
  return result;
}

}  // namespace fabtrack::app
