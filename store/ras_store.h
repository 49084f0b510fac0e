// `fabtrack ras watch`'s snapshots and verdicts in PostgreSQL (schema 022),
// the events of RAS's stream (schema 026), and the port counter samples of a
// job's hosts over a watch window.
#pragma once

#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

#include "core/ras_event.h"
#include "core/ras_snapshot.h"

namespace fabtrack::store {

// Stores a snapshot (its cluster is created when new). A second write of
// the same (cluster, job, taken_at) replaces the first. Returns its id.
int64_t WriteRasSnapshot(pqxx::transaction_base& txn, const RasSnapshot& snapshot);

// The job's snapshots taken at or after `since` (RFC 3339; empty: all),
// oldest first, at most the newest `limit`.
std::vector<RasSnapshot> ReadRasSnapshots(pqxx::transaction_base& txn, const std::string& cluster,
                                          const std::string& job_id, const std::string& since,
                                          int limit);

// Stores one event of the job's RAS stream (its cluster is created when new).
void WriteRasEvent(pqxx::transaction_base& txn, const std::string& cluster,
                   const std::string& job_id, const RasEvent& event);

// The job's stored events, oldest first (by received_at), at most the newest
// `limit`.
std::vector<RasEvent> ReadRasEvents(pqxx::transaction_base& txn, const std::string& cluster,
                                    const std::string& job_id, int limit);

// The outcome of storing a verdict: whether it is the first time this job
// was found stuck, or with a process dead (the one time to alert for each),
// and when those first times were.
struct RasVerdictWrite {
  bool first_stuck = false;
  std::optional<std::string> first_stuck_at;  // RFC 3339
  bool first_peer_dead = false;
  std::optional<std::string> first_peer_dead_at;  // RFC 3339
};

// Stores the job's newest verdict; first_stuck_at and first_peer_dead_at
// are set once and kept.
RasVerdictWrite WriteRasJobVerdict(pqxx::transaction_base& txn, const std::string& cluster,
                                   const std::string& job_id, const RasWatchVerdict& verdict);

struct StoredRasJobVerdict {
  std::string job_id;
  double judged_at = 0;  // epoch seconds
  std::optional<std::string> first_stuck_at;
  RasWatchVerdict verdict;
};

// The cluster's job verdicts judged at or after `since` (epoch seconds),
// newest first, at most `limit`; a row that no longer reads is skipped.
std::vector<StoredRasJobVerdict> ReadRasJobVerdicts(pqxx::transaction_base& txn,
                                                    const std::string& cluster, double since,
                                                    int limit);

// The stored counter samples of these hosts' ports in [from, to] (RFC 3339)
// plus each port's last sample before `from` (the baseline of the first
// change), oldest first.
std::vector<HostPortReading> ReadHostPortReadings(pqxx::transaction_base& txn,
                                                  const std::string& cluster,
                                                  const std::vector<std::string>& hosts,
                                                  const std::string& from, const std::string& to);

// What fabtrack stored of these hosts by `to` (RFC 3339) beside their port
// samples: the fingerprint of each one's newest topology recorded by then
// (the fact "topology"), that topology itself for the `wired` ones (the
// hosts a verdict names: a job of 16,000 hosts is not parsed whole), and
// its HCAs' firmware ("fw_ver mlx5_0", from the port inventory, as last
// seen).
RasHostKnowledge ReadRasHostKnowledge(pqxx::transaction_base& txn, const std::string& cluster,
                                      const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& wired, const std::string& to);

}  // namespace fabtrack::store
