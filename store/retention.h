// Deleting what is stored: chosen runs (`fabtrack runs delete`), and all
// history older than a cutoff (`fabtrack db prune`): runs with everything
// that hangs off them (results, ranks, samples, log lines: ON DELETE
// CASCADE), raw port counter samples, resolved findings, analyses and
// Inspector jobs. Open and acknowledged findings are kept whatever their
// age: they are current. Counting and deleting share one WHERE clause, so a
// dry run says exactly what the real one removes.
#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <vector>

namespace fabtrack::store {

struct PruneCounts {
  int64_t runs = 0;
  int64_t port_counter_samples = 0;
  int64_t snapshot_port_deltas = 0;  // windows between two snapshots (no run)
  int64_t resolved_findings = 0;
  int64_t analyses = 0;
  int64_t inspector_jobs = 0;
  int64_t locate_verdicts = 0;   // with their suspects and run links
  int64_t ab_comparisons = 0;    // with their judgements and run links
  int64_t ras_snapshots = 0;     // `ras watch` snapshots, by when taken
  int64_t ras_job_verdicts = 0;  // `ras watch` job verdicts, by their newest snapshot
  int64_t ras_events = 0;        // RAS's stream events `ras watch` stored, by when read
};

// What is older than `cutoff_iso` (of `cluster`, or of every cluster);
// deleted when `apply`, else only counted.
PruneCounts PruneBefore(pqxx::transaction_base& txn, const std::string& cutoff_iso,
                        const std::optional<std::string>& cluster, bool apply);

// The ids among `ids` that name a stored run, in the order given.
std::vector<int64_t> ExistingRuns(pqxx::transaction_base& txn, const std::vector<int64_t>& ids);

// Deletes the runs with these ids (and what hangs off them); returns the ids
// that existed.
std::vector<int64_t> DeleteRuns(pqxx::transaction_base& txn, const std::vector<int64_t>& ids);

}  // namespace fabtrack::store
