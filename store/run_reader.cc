#include "store/run_reader.h"

#include <pqxx/pqxx>

#include "store/copy_row.h"
#include "store/row_fields.h"

namespace fabtrack::store {

std::vector<RunSummary> ListRuns(pqxx::connection_base& connection, const RunFilter& filter) {
  pqxx::read_transaction txn(connection);
  pqxx::result rows = txn.exec_params(
      "SELECT r.id, r.cluster, to_char(r.started_at AT TIME ZONE 'UTC', "
      "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), r.source, r.collective, r.dtype, r.network, r.nodes, "
      "r.ranks, r.transports, r.gdrdma, r.status, "
      "(SELECT count(*) FROM run_results x WHERE x.run_id = r.id), "
      "(SELECT max(greatest(x.oop_busbw_gbps, x.ip_busbw_gbps)) FROM run_results x "
      " WHERE x.run_id = r.id), "
      "(SELECT x.oop_time_us FROM run_results x WHERE x.run_id = r.id AND x.size_bytes > 0 "
      " ORDER BY x.size_bytes, x.row_index LIMIT 1) "
      "FROM runs r WHERE ($1::text IS NULL OR r.cluster = $1) "
      "ORDER BY r.started_at DESC, r.id DESC LIMIT $2",
      filter.cluster, filter.limit);
  std::vector<RunSummary> out;
  for (const pqxx::row& row : rows) {
    RunSummary s;
    ReadColumns(row, 0, &s.id, &s.cluster, &s.started_at, &s.source, &s.collective, &s.dtype,
                &s.network, &s.nodes, &s.ranks, &s.transports, &s.gdrdma, &s.status, &s.sizes,
                &s.peak_busbw_gbps, &s.small_latency_us);
    out.push_back(std::move(s));
  }
  return out;
}

std::optional<nlohmann::json> ReadRunDetail(pqxx::connection_base& connection, int64_t run_id) {
  pqxx::read_transaction txn(connection);
  // jsonb built by the server: every column under its own name, NULLs as
  // null, without a hand mapping to keep in step with the schema.
  auto one = [&](const char* sql) {
    pqxx::result r = txn.exec_params(sql, run_id);
    return r.empty() || r[0][0].is_null() ? nlohmann::json(nullptr)
                                          : nlohmann::json::parse(r[0][0].c_str());
  };
  nlohmann::json run = one("SELECT to_jsonb(r) FROM runs r WHERE r.id = $1");
  if (run.is_null()) return std::nullopt;
  nlohmann::json out;
  out["run"] = std::move(run);
  out["results"] =
      one("SELECT coalesce(jsonb_agg(to_jsonb(x) - 'run_id' ORDER BY x.row_index), '[]') "
          "FROM run_results x WHERE x.run_id = $1");
  out["log_events"] =
      one("SELECT coalesce(jsonb_agg(to_jsonb(e) - 'run_id' ORDER BY e.seq), '[]') "
          "FROM run_log_events e WHERE e.run_id = $1");
  out["transports"] = one(
      "SELECT coalesce(jsonb_agg(t ORDER BY t.family), '[]') FROM ("
      "  SELECT family, count(*) AS channels, count(*) FILTER (WHERE gdrdma) AS gdrdma_channels,"
      "         array_agg(DISTINCT host) FILTER (WHERE host IS NOT NULL) AS hosts"
      "  FROM transport_observations WHERE run_id = $1 GROUP BY family) t");
  out["findings"] =
      one("SELECT coalesce(jsonb_agg(jsonb_build_object('kind', kind, 'severity', severity, "
          "'subject', subject, 'state', state, 'message', message) ORDER BY id), '[]') "
          "FROM findings WHERE run_id = $1");
  // The switch side of its window (`sweep --fabric-scan`, schema 021): the
  // leaves, unmapped hosts and the cables where something moved; the two
  // scans themselves stay in the table.
  out["fabric_window"] =
      one("SELECT jsonb_build_object('scanned_before', scanned_before, 'scanned_after', "
          "scanned_after, 'links', links, 'unmapped_hosts', to_jsonb(unmapped_hosts), 'leaves', "
          "fabric_window->'leaves', 'link_deltas', fabric_window->'link_deltas') "
          "FROM run_fabric_windows WHERE run_id = $1");
  // Each node's CPUs over its window (schema 023).
  out["cpu_windows"] =
      one("SELECT coalesce(jsonb_agg(jsonb_build_object('host', host, 'seconds', seconds, "
          "'cpus', cpus, 'busy_fraction', busy_fraction, 'steal_fraction', steal_fraction, "
          "'other_cpus', other_cpus, 'load1_before', load1_before, 'load1_after', load1_after, "
          "'top_others', top_others) ORDER BY host), '[]') FROM run_cpu_windows WHERE run_id = $1");
  return out;
}

}  // namespace fabtrack::store
