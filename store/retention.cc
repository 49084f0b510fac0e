#include "store/retention.h"

#include <pqxx/pqxx>

namespace fabtrack::store {
namespace {

// One table's share of a prune: the rows `where` selects ($1 cutoff, $2
// cluster or NULL for all), counted or deleted.
int64_t Prune(pqxx::transaction_base& txn, const std::string& table, const std::string& where,
              const std::string& cutoff, const std::optional<std::string>& cluster, bool apply) {
  const std::string sql = apply ? "WITH gone AS (DELETE FROM " + table + " WHERE " + where +
                                      " RETURNING 1) SELECT count(*) FROM gone"
                                : "SELECT count(*) FROM " + table + " WHERE " + where;
  pqxx::result r =
      cluster ? txn.exec_params(sql, cutoff, *cluster) : txn.exec_params(sql, cutoff, nullptr);
  return r[0][0].as<int64_t>();
}

}  // namespace

PruneCounts PruneBefore(pqxx::transaction_base& txn, const std::string& cutoff_iso,
                        const std::optional<std::string>& cluster, bool apply) {
  const std::string of_cluster = "($2::text IS NULL OR cluster = $2::text)";
  PruneCounts c;
  // Samples first: they may point at runs by id (not a foreign key).
  c.port_counter_samples = Prune(txn, "port_counter_samples",
                                 "sampled_at < $1::timestamptz AND ($2::text IS NULL OR port_id IN "
                                 "(SELECT id FROM ports WHERE cluster = $2::text))",
                                 cutoff_iso, cluster, apply);
  // Every sample older than the cutoff went: a port whose newest sample
  // was one has none now (the inventory's copy, schema 018).
  if (apply) {
    const std::string sql =
        "UPDATE ports SET newest_sample_at = NULL, newest_sample_run_id = NULL, "
        "newest_sample_state = NULL, newest_sample_phys_state = NULL, newest_sample_rate_gbps = "
        "NULL WHERE newest_sample_at < $1::timestamptz AND ($2::text IS NULL OR cluster = "
        "$2::text)";
    if (cluster) {
      txn.exec_params(sql, cutoff_iso, *cluster);
    } else {
      txn.exec_params(sql, cutoff_iso, nullptr);
    }
  }
  // Windows between two snapshots go with the older samples they span; a
  // run's go with the run (ON DELETE CASCADE).
  c.snapshot_port_deltas =
      Prune(txn, "run_port_deltas",
            "run_id IS NULL AND window_end < $1::timestamptz AND ($2::text IS "
            "NULL OR port_id IN (SELECT id FROM ports WHERE cluster = $2::text))",
            cutoff_iso, cluster, apply);
  c.runs = Prune(txn, "runs", "started_at < $1::timestamptz AND " + of_cluster, cutoff_iso, cluster,
                 apply);
  c.resolved_findings =
      Prune(txn, "findings", "state = 'resolved' AND last_seen < $1::timestamptz AND " + of_cluster,
            cutoff_iso, cluster, apply);
  c.inspector_jobs =
      Prune(txn, "inspector_jobs",
            "coalesce(ended_at, started_at, ingested_at) < $1::timestamptz AND " + of_cluster,
            cutoff_iso, cluster, apply);
  // Records pruned by when they were made alone. A verdict's suspects,
  // judgements and run links go with it (ON DELETE CASCADE): it outlives its
  // runs only until it is as old as they were.
  struct ByDate {
    const char* table;
    const char* made_at;
    int64_t PruneCounts::*count;
  };
  static constexpr ByDate kByDate[] = {
      {"analyses", "analyzed_at", &PruneCounts::analyses},
      {"locate_verdicts", "located_at", &PruneCounts::locate_verdicts},
      {"ab_comparisons", "compared_at", &PruneCounts::ab_comparisons},
      {"ras_snapshots", "taken_at", &PruneCounts::ras_snapshots},
      {"ras_job_verdicts", "judged_at", &PruneCounts::ras_job_verdicts},
      {"ras_events", "received_at", &PruneCounts::ras_events},
  };
  for (const ByDate& d : kByDate) {
    c.*d.count =
        Prune(txn, d.table, std::string(d.made_at) + " < $1::timestamptz AND " + of_cluster,
              cutoff_iso, cluster, apply);
  }
  return c;
}

std::vector<int64_t> ExistingRuns(pqxx::transaction_base& txn, const std::vector<int64_t>& ids) {
  std::vector<int64_t> existing;
  for (int64_t id : ids) {
    if (!txn.exec_params("SELECT 1 FROM runs WHERE id = $1", id).empty()) existing.push_back(id);
  }
  return existing;
}

std::vector<int64_t> DeleteRuns(pqxx::transaction_base& txn, const std::vector<int64_t>& ids) {
  std::vector<int64_t> deleted;
  for (int64_t id : ids) {
    pqxx::result r = txn.exec_params("DELETE FROM runs WHERE id = $1 RETURNING id", id);
    if (!r.empty()) deleted.push_back(id);
  }
  return deleted;
}

}  // namespace fabtrack::store
