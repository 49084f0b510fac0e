#include "store/spool_replay.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <filesystem>
#include <pqxx/pqxx>
#include <thread>

#include "core/counter_deltas.h"
#include "core/interrupt.h"
#include "store/ab_store.h"
#include "store/fabric_scan_store.h"
#include "store/locate_store.h"
#include "store/port_writer.h"
#include "store/ras_store.h"
#include "store/run_cpu_window_store.h"
#include "store/run_fabric_window_store.h"
#include "store/run_writer.h"
#include "store/snapshot_deltas.h"

namespace fabtrack::store {
namespace {

// One replay of a spool at a time. Two commands reaching the database at
// once (after an outage: the watchdog's `ras watch` and a cron `counters
// snapshot`) each read the same batch before either removed it: RAS events
// and fabric scans, kept once by a look-up rather than a constraint, were
// stored twice, and the later replayer found the batch gone, called it
// "truncated" and stopped (`spool replay` exit 3). The second waits for the
// first (Ctrl-C still ends the wait) and then replays what is left, so the
// spooled batches still go in before the waiting command's own. Without a
// lock file (a spool it may not write) it replays unlocked, as before.
class ReplayLock {
 public:
  explicit ReplayLock(const std::string& dir)
      : fd_(open((dir + "/.replay.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600)) {
    while (fd_ >= 0 && flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno != EWOULDBLOCK && errno != EINTR) break;
      ThrowIfInterrupted();
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
  }
  ~ReplayLock() {
    if (fd_ >= 0) close(fd_);
  }
  ReplayLock(const ReplayLock&) = delete;
  ReplayLock& operator=(const ReplayLock&) = delete;

 private:
  int fd_;
};

}  // namespace

AppliedBatch ApplyBatch(pqxx::transaction_base& txn, const SpoolBatch& batch) {
  AppliedBatch applied;
  if (batch.kind == SpoolBatch::Kind::kLocate) {
    applied.locate_verdict_id = WriteLocateVerdict(txn, batch.locate).id;
    return applied;
  }
  if (batch.kind == SpoolBatch::Kind::kAb) {
    const RecordWrite written = WriteAbComparison(txn, batch.ab);
    applied.ab_comparison_id = written.id;
    applied.ab_linked_runs = written.linked_runs;
    return applied;
  }
  if (batch.kind == SpoolBatch::Kind::kFabricScan) {
    StoredFabricScan stored =
        WriteFabricScan(txn, batch.cluster, batch.fabric_scan, batch.fabric_findings);
    applied.fabric_scan_id = stored.id;
    applied.fabric_port_samples = stored.port_samples;
    return applied;
  }
  if (batch.kind == SpoolBatch::Kind::kRas) {
    for (const RasSnapshot& s : batch.ras.snapshots) WriteRasSnapshot(txn, s);
    for (const RasEvent& e : batch.ras.events) {
      WriteRasEvent(txn, batch.ras.cluster, batch.ras.job_id, e);
    }
    if (batch.ras.verdict) {
      RasVerdictWrite w =
          WriteRasJobVerdict(txn, batch.ras.cluster, batch.ras.job_id, *batch.ras.verdict);
      applied.ras_first_stuck = w.first_stuck;
      applied.ras_first_stuck_at = w.first_stuck_at;
      applied.ras_first_peer_dead = w.first_peer_dead;
      applied.ras_first_peer_dead_at = w.first_peer_dead_at;
    }
    return applied;
  }
  if (batch.kind == SpoolBatch::Kind::kHostSample) {
    applied.samples = WriteHostSample(txn, batch.cluster, batch.host, batch.sampled_at,
                                      batch.run_id, batch.phase);
    // Two snapshots of a port with no run between them are a window too.
    if (batch.phase == "snapshot" && !batch.run_id) {
      applied.snapshot_windows =
          WriteSnapshotPortDeltas(txn, batch.cluster, batch.host, batch.sampled_at);
    }
    return applied;
  }
  WriteRunResult result = WriteRun(txn, batch.run);
  applied.run_id = result.run_id;
  applied.inserted = result.inserted;
  if (!result.inserted) return applied;
  if (batch.fabric_window) WriteRunFabricWindow(txn, result.run_id, *batch.fabric_window);
  if (!batch.cpu_windows.empty()) WriteRunCpuWindows(txn, result.run_id, batch.cpu_windows);
  if (!batch.bracket) return applied;
  const SpooledBracket& b = *batch.bracket;
  for (const HostPorts& after : b.after) {
    auto before = std::find_if(b.before.begin(), b.before.end(),
                               [&](const HostPorts& h) { return h.host == after.host; });
    if (before == b.before.end()) continue;
    WriteHostSample(txn, batch.run.cluster, *before, b.started_at, result.run_id, "before");
    WriteHostSample(txn, batch.run.cluster, after, b.ended_at, result.run_id, "after");
    WriteRunPortDeltas(txn, batch.run.cluster, after, ComputeDeltas(*before, after, b.seconds),
                       result.run_id, b.started_at, b.ended_at);
    ++applied.bracketed_hosts;
  }
  return applied;
}

bool IsDatabaseOutage(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) ||
      dynamic_cast<const pqxx::in_doubt_error*>(&e)) {
    return true;
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    // Class 08 connection exception, 57 operator intervention (shutdown),
    // 53 insufficient resources (too many connections, disk full).
    const std::string state = sql->sqlstate();
    if (state.rfind("08", 0) == 0 || state.rfind("57", 0) == 0 || state.rfind("53", 0) == 0) {
      return true;
    }
    const std::string what = sql->what();
    return what.find("terminating connection") != std::string::npos ||
           what.find("server closed the connection") != std::string::npos;
  }
  // Any other libpqxx failure is on the client or the wire (a COPY cut off
  // by a dying server reports "Error writing to table"), not a refusal.
  return dynamic_cast<const pqxx::failure*>(&e) != nullptr;
}

std::string ReadInstanceId(pqxx::connection_base& connection) {
  try {
    pqxx::nontransaction txn(connection);
    pqxx::result r = txn.exec("SELECT id::text FROM fabtrack_instance");
    return r.empty() ? "" : r[0][0].c_str();
  } catch (const pqxx::sql_error&) {
    return "";  // before migration 008, or no SELECT on it
  }
}

ReplayResult ReplaySpool(const Spool& spool, pqxx::connection_base& connection,
                         const SpoolTarget& target, std::ostream& log, bool adopt) {
  ReplayResult result;
  ReplayLock lock(spool.dir());
  std::vector<std::string> pending = spool.Pending(target);
  const std::string here = adopt ? "" : ReadInstanceId(connection);
  for (size_t i = 0; i < pending.size(); ++i) {
    const std::string& path = pending[i];
    std::string why;
    std::optional<SpoolBatch> batch = spool.Read(path, &why);
    if (!batch) {
      std::error_code gone;
      if (!std::filesystem::exists(path, gone) && !gone) continue;  // dropped meanwhile
      log << "fabtrack spool: " << why << "; moved to " << spool.dir() << "/corrupt\n";
      spool.Quarantine(path);
      ++result.corrupt;
      continue;
    }
    if (!here.empty() && !batch->instance_id.empty() && batch->instance_id != here) {
      log << "fabtrack spool: " << path << " was spooled for database instance "
          << batch->instance_id << " but " << target.Describe() << " is instance " << here
          << ": not stored here (`spool replay --target` moves it, `spool drop` deletes it)\n";
      ++result.foreign;
      continue;
    }
    try {
      pqxx::work txn(connection);
      ApplyBatch(txn, *batch);
      txn.commit();
    } catch (const pqxx::sql_error& e) {
      if (IsDatabaseOutage(e)) {
        result.remaining = static_cast<int>(pending.size() - i);
        log << "fabtrack spool: database lost during replay (" << e.what() << "); "
            << result.remaining << " batch(es) stay spooled\n";
        return result;
      }
      // The database is up and refuses this batch (a constraint, a value):
      // it would be refused forever; set it aside and go on.
      log << "fabtrack spool: " << path << ": refused by the database (" << e.what()
          << "); moved to " << spool.dir() << "/corrupt\n";
      spool.Quarantine(path);
      ++result.corrupt;
      continue;
    } catch (const pqxx::failure& e) {
      result.remaining = static_cast<int>(pending.size() - i);
      log << "fabtrack spool: database lost during replay (" << e.what() << "); "
          << result.remaining << " batch(es) stay spooled\n";
      return result;
    }
    spool.Remove(path);
    ++result.replayed;
  }
  return result;
}

}  // namespace fabtrack::store
