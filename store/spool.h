// Store and forward. When PostgreSQL cannot take a write (unreachable, or it
// failed mid-transaction), a collector puts the complete batch it was writing
// into a local spool directory instead, durably (temp file, fsync, rename,
// directory fsync), with a checksum. Batches are replayed oldest first, each
// in one transaction, and removed only after that transaction commits; every
// write is idempotent (runs by content hash, samples by port and time), so a
// crash between commit and removal replays into no duplicates.
// The files live here; writing a batch and replaying them into a database
// is store/spool_replay.h.
#pragma once

#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/ab_comparison.h"
#include "core/fabric_scan.h"
#include "core/json_instances.h"
#include "core/locate.h"
#include "core/node_cpu.h"
#include "core/port_sample.h"
#include "core/ras_watch_record.h"
#include "core/run_fabric_window.h"
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
  // Special members out of line (the .cc, `= default`): this struct is in most
  // of the project's units, and the implicit ones were compiled again in each
  // (BENCHMARKS.md, "Fresh build CPU", round seven). Declaring them ends
  // aggregate initialisation: set the fields after construction.
  SpoolBatch();
  SpoolBatch(const SpoolBatch&);
  SpoolBatch(SpoolBatch&&) noexcept;
  SpoolBatch& operator=(const SpoolBatch&);
  SpoolBatch& operator=(SpoolBatch&&) noexcept;
  ~SpoolBatch();

  enum class Kind { kRun, kHostSample, kLocate, kAb, kRas, kFabricScan };
  Kind kind = Kind::kRun;
  SpoolTarget target;  // the database it must be stored in, and no other
  // That database's fabtrack_instance id when the spooling command had seen
  // it (a write failed mid-way, a privilege was missing); "" when not.
  std::string instance_id;
  // kRun
  RunRecord run;
  std::optional<SpooledBracket> bracket;
  // The switch side of the same window (`sweep --fabric-scan`).
  std::optional<RunFabricWindow> fabric_window;
  // Each node's CPUs over the same window (the sweep's CPU bracket).
  std::vector<NodeCpuWindow> cpu_windows;
  // kHostSample
  std::string cluster, sampled_at, phase;
  HostPorts host;
  std::optional<int64_t> run_id;  // `counters watch --run-id`
  // kLocate: a `fabtrack locate --cluster` verdict
  LocateRecord locate;
  // kAb: a `fabtrack sweep --ab` comparison (after its runs in the spool)
  AbRecord ab;
  // kRas: what a `fabtrack ras watch` took of one job (snapshots, events,
  // its verdict) while the database was away
  RasWatchRecord ras;
  // kFabricScan: a `fabtrack fabric scan --cluster` (cluster above), with
  // its findings (a JSON array) as judged when it was taken
  FabricScan fabric_scan;
  std::string fabric_findings = "[]";
};

class SpoolError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What `spool status` lists: one pending batch, from its header line alone.
struct PendingBatch {
  std::string path;
  SpoolTarget target;
  std::string
      kind;  // "run" | "host_sample" | "locate" | "ab" | "ras" | "fabric_scan" | "unreadable"
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
  int64_t run_id = 0;             // kRun
  bool inserted = false;          // false: the run was already stored (replay, re-ingest)
  size_t bracketed_hosts = 0;     // nodes whose port counters were attached
  size_t samples = 0;             // kHostSample: port samples written
  size_t snapshot_windows = 0;    // kHostSample "snapshot": windows to the port's neighbours
  int64_t locate_verdict_id = 0;  // kLocate
  int64_t ab_comparison_id = 0;   // kAb
  int ab_linked_runs = 0;         // kAb: runs of both sides linked to it
  // kRas with a verdict: the job's alert state after it (store/ras_store.h
  // RasVerdictWrite): whether this verdict is the first to find it stuck
  // (process dead), and since when.
  int64_t fabric_scan_id = 0;  // kFabricScan
  size_t fabric_port_samples = 0;
  bool ras_first_stuck = false;
  std::optional<std::string> ras_first_stuck_at;
  bool ras_first_peer_dead = false;
  std::optional<std::string> ras_first_peer_dead_at;
};

}  // namespace fabtrack::store
