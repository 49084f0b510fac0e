// `fabtrack ras watch`: a running job's NCCL RAS asked every few seconds,
// each snapshot stored with the job (schema 022), and the verdict over the
// consecutive snapshots (analyzer/ras_watch.h: stuck communicators,
// laggards, dead ranks) with the port counters of the ranks' hosts over the
// watch window, stored as the job's verdict; the first time a job is found
// stuck is said once (the alert's dedup key). Where RAS streams events (NCCL
// >= 2.29, MONITOR), a connection to the stream stays open beside the polls,
// read between them (every wait bounded by the watch's own ticks): each
// event is stored with the job (schema 026), and a PEER_DEAD ends the watch
// at once with the dead process named (critical, alerted once per job). An
// older RAS is polled as before, said once.
#pragma once

#include <functional>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/ras/ras_client.h"
#include "core/database_choice.h"
#include "core/ras_event.h"
#include "core/ras_snapshot.h"

namespace fabtrack::app {

struct RasWatchRequest {
  ras::QueryOptions query;  // host, port, deadline per query
  double every_s = 30;
  std::string cluster;
  std::string job_id;
  int count = 0;              // snapshots to take; 0: until done
  double max_duration_s = 0;  // 0: none (with until-done: until the job ends or is stuck)
  std::optional<std::string> hosts_file;
  bool resolve = true;  // reverse-resolve addresses the hosts file does not name
  bool monitor = true;  // read RAS's event stream where it offers one (--no-monitor: off)
  DatabaseChoice database;
};

struct RasWatchProgress {
  // After each snapshot (stored): its index (from 1), the snapshot.
  std::function<void(int, const RasSnapshot&)> snapshot;
  // A query that got no whole answer (the watch ends).
  std::function<void(const std::string&)> no_answer;
  // An event of RAS's stream, stored, its host mapped.
  std::function<void(const RasEvent&)> event;
  // What the event stream could not do, said once each: not offered (NCCL
  // < 2.29), closed, a line it could not read.
  std::function<void(const std::string&)> notice;
};

struct RasWatchResult {
  std::vector<RasSnapshot> snapshots;  // the newest (at most a day's at --every 60)
  RasWatchVerdict verdict;
  bool first_stuck = false;  // this watch is the first to find the job stuck: alert
  std::optional<std::string> first_stuck_at;
  bool first_peer_dead = false;  // the first watch to see a process of the job declared dead
  std::optional<std::string> first_peer_dead_at;
  // The event stream: "streaming", "not offered" (NCCL < 2.29), "failed", "closed", "off".
  std::string monitor = "off";
  int events = 0;     // events this watch read and stored
  std::string ended;  // why the watch stopped: "count", "duration", "stuck", "finalized",
                      // "no answer", "peer dead"
  std::vector<std::string> unmapped_nodes;  // addresses no host was found for
  // The database was away (an outage): what the watch took is spooled, the
  // verdict was made from this watch alone, and whether the job was alerted
  // before cannot be known (alert "unconfirmed").
  bool verdict_stored = true;
  bool port_counters_read = true;  // the hosts' port counters over the window joined
};

// Throws CommandExit: 3 (with the reason on `err`) for an unreadable hosts
// file, a misconfigured database, or no snapshot taken. A database outage
// is not one: the watch's take is spooled (RasWatchResult::verdict_stored).
RasWatchResult WatchRas(const RasWatchRequest& request, const RasWatchProgress& progress,
                        std::ostream& err);

}  // namespace fabtrack::app
