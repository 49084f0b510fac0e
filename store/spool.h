// Store and forward. When PostgreSQL cannot take a write (unreachable, or it
// failed mid-transaction), a collector puts the complete batch it was writing
// into a local spool directory instead, durably (temp file, fsync, rename,
// directory fsync), with a checksum. Batches are replayed oldest first, each
// in one transaction, and removed only after that transaction commits; every
// write is idempotent (runs by content hash, samples by port and time), so a
// crash between commit and removal replays into no duplicates.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/port_sample.h"
#include "core/run_record.h"
#include "store/spool_target.h"

namespace fabtrack::store {

// $FABTRACK_SPOOL_DIR, else /var/spool/fabtrack as root, else
// $XDG_STATE_HOME/fabtrack/spool (~/.local/state/fabtrack/spool).
std::string DefaultSpoolDir();

// The port counters of every node around one run (a sweep's bracket).
struct SpooledBracket {
  std::vector<HostPorts> before, after;
  std::string started_at, ended_at;
  double seconds = 0;
};

struct SpoolBatch {
  enum class Kind { kRun, kHostSample };
  Kind kind = Kind::kRun;
  SpoolTarget target;  // the database it must be stored in, and no other
  // That database's fabtrack_instance id when the spooling command had seen
  // it (a write failed mid-way, a privilege was missing); "" when not.
  std::string instance_id;
  // kRun
  RunRecord run;
  std::optional<SpooledBracket> bracket;
  // kHostSample
  std::string cluster, sampled_at, phase;
  HostPorts host;
  std::optional<int64_t> run_id;  // `counters watch --run-id`
};

class SpoolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What `spool status` lists: one pending batch, from its header line alone.
struct PendingBatch {
  std::string path;
  SpoolTarget target;
  std::string kind;  // "run" | "host_sample" | "unreadable"
  uintmax_t bytes = 0;
  int64_t modified_unix = 0;
};

class Spool {
 public:
  explicit Spool(std::string dir) : dir_(std::move(dir)) {}
  const std::string& dir() const { return dir_; }

  // Durably adds a batch; returns its file. Throws SpoolError. The folder is
  // made 0700: batches hold a cluster's results and command lines.
  std::string Put(const SpoolBatch& batch);
  // Pending batch files, oldest first: all of them, or one target's.
  std::vector<std::string> Pending() const;
  std::vector<std::string> Pending(const SpoolTarget& target) const;
  // Every pending batch with its target, size and age, oldest first.
  std::vector<PendingBatch> List() const;
  // Reads and verifies one batch; nullopt with the reason when it is corrupt.
  std::optional<SpoolBatch> Read(const std::string& path, std::string* why) const;
  // Removes a replayed batch (durably).
  void Remove(const std::string& path) const;
  // Moves a corrupt batch aside to <dir>/corrupt/ so it never blocks the rest.
  void Quarantine(const std::string& path) const;

 private:
  std::string dir_;
};

struct AppliedBatch {
  int64_t run_id = 0;          // kRun
  bool inserted = false;       // false: the run was already stored (replay, re-ingest)
  size_t bracketed_hosts = 0;  // nodes whose port counters were attached
  size_t samples = 0;          // kHostSample: port samples written
};

// Writes one batch in the caller's transaction: the path collectors use when
// the database is there, and the replay's when it comes back.
AppliedBatch ApplyBatch(pqxx::transaction_base& txn, const SpoolBatch& batch);

struct ReplayResult {
  int replayed = 0;   // committed and removed
  int corrupt = 0;    // quarantined
  int remaining = 0;  // still pending (the database failed again)
  int foreign = 0;    // left pending: spooled for another instance of this name
};

// This database's fabtrack_instance id (migration 008), or "" when it has
// none or this role may not read it.
std::string ReadInstanceId(pqxx::connection_base& connection);

// Whether an exception from a write means the database went away (connection
// lost, server shutting down, commit outcome unknown) rather than that it
// refused the data: an outage is spooled and waited out, a refusal is an error.
bool IsDatabaseOutage(const std::exception& e);

// Replays the pending batches of `target` in order into `connection` (which
// must be that database, or one the operator named with `spool replay
// --target`), one transaction each, stopping at the first database failure
// so that order is kept. Other targets' batches are not touched. Progress
// goes to `log`.
// A batch that recorded an instance id other than this database's is left
// pending and counted as foreign, unless `adopt` (the operator named the
// target with `spool replay --target`).
ReplayResult ReplaySpool(const Spool& spool, pqxx::connection_base& connection,
                         const SpoolTarget& target, std::ostream& log, bool adopt = false);

}  // namespace fabtrack::store
