#include "store/analysis_reader.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <pqxx/pqxx>
#include <sstream>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>

#include "core/clock.h"
#include "core/json_instances.h"
#include "core/run_figures_text.h"
#include "store/copy_row.h"
#include "store/locate_store.h"
#include "store/ras_store.h"
#include "store/row_fields.h"
#include "store/run_cpu_window_store.h"
#include "store/run_fabric_window_store.h"
#include "store/topology_store.h"

namespace fabtrack::store {
namespace {

// A port counter delta a detector may need: saturated, or moved and not a
// traffic counter (bytes, packets: they move in every run and no detector
// reads them). The same text as the partial index predicate of migrations
// 010 and 024 (run_port_deltas_moved_rows), which the planner matches
// literally.
constexpr const char* kMovedPortDelta =
    "(saturated OR (delta IS DISTINCT FROM 0 AND counter <> ALL ('{port_xmit_data,"
    "port_rcv_data,port_xmit_packets,port_rcv_packets,unicast_xmit_packets,unicast_rcv_packets,"
    "multicast_xmit_packets,multicast_rcv_packets,xmit_bytes,rcv_bytes}'::text[])))";

// How many locate verdicts the report shows.
constexpr int kLocateVerdicts = 10;

constexpr const char* kIso = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";

}  // namespace

void StoreRunSummaries(pqxx::connection_base& connection, const AnalysisInput& input,
                       const RunFigures& produced) {
  // One JSON parameter: [{"run": id, "summary": {key: [numbers]}}, ...];
  // NaN ("no number") is null in JSON.
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& [run_id, figures] : produced) {
    nlohmann::json summary = nlohmann::json::object();
    for (const auto& [key, numbers] : figures) {
      nlohmann::json list = nlohmann::json::array();
      for (double n : numbers)
        list.push_back(std::isfinite(n) ? nlohmann::json(n) : nlohmann::json());
      summary[key] = std::move(list);
    }
    rows.push_back({{"run", run_id}, {"summary", std::move(summary)}});
  }
  if (input.runs.empty()) return;
  int64_t newest = input.runs.front().id;
  double newest_at = input.runs.front().started_at;
  for (const RunView& r : input.runs) {
    if (r.started_at >= newest_at) newest = r.id, newest_at = r.started_at;
  }
  pqxx::work txn(connection);
  const std::string cluster = input.cluster.name;
  const bool merge = std::any_of(input.runs.begin(), input.runs.end(),
                                 [](const RunView& r) { return r.summarized; });
  if (!merge) {
    // Computed over the full history: what was stored before (other
    // settings, other runs) goes.
    txn.exec_params(
        "DELETE FROM analysis_run_summaries WHERE run_id IN (SELECT id FROM runs WHERE cluster = "
        "$1)",
        cluster);
  }
  // Rows of runs deleted since the load are skipped (the digest no longer
  // matches them anyway).
  txn.exec_params(
      "INSERT INTO analysis_run_summaries (run_id, summary) "
      "SELECT (e->>'run')::bigint, e->'summary' FROM jsonb_array_elements($1::jsonb) e "
      "WHERE EXISTS (SELECT 1 FROM runs WHERE id = (e->>'run')::bigint) "
      "ON CONFLICT (run_id) DO UPDATE "
      "SET summary = analysis_run_summaries.summary || EXCLUDED.summary",
      rows.dump());
  txn.exec_params(
      "INSERT INTO analysis_summary_state (cluster, through_started_at, runs_digest) "
      "SELECT $1, started_at, $3 FROM runs WHERE id = $2 "
      "ON CONFLICT (cluster) DO UPDATE SET through_started_at = EXCLUDED.through_started_at, "
      "runs_digest = EXCLUDED.runs_digest, updated_at = now()",
      cluster, newest, input.runs_digest);
  txn.commit();
}

std::vector<std::string> ClustersToAnalyze(pqxx::connection_base& connection) {
  pqxx::read_transaction txn(connection);
  std::vector<std::string> out;
  // Clusters with runs, with windows between imported snapshots (a site
  // that only imports its dumps has no run), or with nodes' wiring.
  for (const pqxx::row& row :
       txn.exec("SELECT cluster FROM runs UNION SELECT p.cluster FROM run_port_deltas d JOIN "
                "ports p ON p.id = d.port_id WHERE d.run_id IS NULL UNION SELECT cluster FROM "
                "node_topologies ORDER BY 1")) {
    out.push_back(row[0].as<std::string>());
  }
  return out;
}

// Side B of a `sweep --ab` ran with a setting on purpose: an experiment, not
// the cluster's state. The nightly series, baselines and detectors see side
// A (the configuration as it is) and never learn from side B, whose verdict
// is its own record (ab_comparisons).
constexpr const char* kNotAbSideB = "NOT (tags @> '{\"ab_side\": \"B\"}'::jsonb)";

AnalysisInput LoadAnalysisInput(pqxx::connection_base& connection, const AnalysisQuery& query) {
  // One snapshot for every statement: the runs, the summaries' state and
  // rows, and the results agree even while an ingest or another analysis
  // commits in between (a summary valid for the runs read is read with them).
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> txn(connection);
  // No parallel workers: the scans here are a few thousand pages, and a
  // worker is a process started per query (the runs' Gather Merge on three
  // years of a 4096-node cluster: 0.39 -> 0.29 s of the server's CPU for the
  // newest night without them, the same rows).
  txn.exec("SET LOCAL max_parallel_workers_per_gather = 0");
  AnalysisInput input;
  pqxx::result cluster = txn.exec_params(
      "SELECT name, fabric, rail_optimized FROM clusters WHERE name = $1", query.cluster);
  if (cluster.empty()) throw UnknownCluster("no cluster named '" + query.cluster + "'");
  input.cluster.name = query.cluster;
  input.cluster.fabric = Get<std::string>(cluster[0][1]);
  input.cluster.rail_optimized = Get<bool>(cluster[0][2]);

  // Host lists by digest (migration 010): each distinct list is read and
  // split once and shared by every run that used it (core/host_list.h). The
  // first run of each digest is found on the small columns and only its list
  // is read (DISTINCT ON sorted every run's row with its list pointer: 70 ms
  // for three years of a 4096-node cluster, 22 ms this way).
  // The start's ISO text is formatted here from its epoch (to_char per row
  // was half of this query's server time on three years of a 4096-node
  // cluster; the same text: whole seconds, truncated, UTC). The epoch is
  // date_part's float8, not extract's numeric cast to float8 (numeric since
  // PostgreSQL 14, a numeric per row): both are the correctly rounded
  // microseconds / 10^6, the same double (checked on a million random
  // timestamps), at half the server's time. So are the ports' below.
  pqxx::result runs = txn.exec_params(
      "SELECT id, date_part('epoch', started_at), source, backend, collective, dtype, "
      "nodes, ranks, ranks_per_node, hosts_digest, network, transports, gdrdma, nccl_version, "
      "sweep_id, link_straggler_host, status, oversubscribed, max_ranks_per_machine, "
      "cpus_per_machine, oob_ok, oob_count, cuda_version, driver_version, nccl_env::text, "
      "node_facts::text, parameters->>'net_plugin', iters FROM runs WHERE cluster = $1 AND " +
          std::string(kNotAbSideB),
      query.cluster);
  // Oldest first, by (started_at, id): sorted here rather than by the server,
  // which sorted every run's whole row (a fifth of this query's time on three
  // years of a 4096-node cluster). Runs are stored about in the order they
  // ran, so this is mostly one pass that finds them sorted. date_part's
  // doubles order as the timestamps do (microseconds apart are distinct
  // doubles for any date a run has).
  std::vector<std::pair<std::pair<double, int64_t>, int>> order;
  order.reserve(runs.size());
  for (int i = 0; i < static_cast<int>(runs.size()); ++i) {
    order.push_back({{Must<double>(runs[i][1]), Must<int64_t>(runs[i][0])}, i});
  }
  if (!std::is_sorted(order.begin(), order.end())) std::sort(order.begin(), order.end());
  std::unordered_map<std::string, std::shared_ptr<const HostList::Hosts>> host_lists;
  for (const pqxx::row& row :
       txn.exec_params("SELECT hosts_digest, hosts FROM runs WHERE id IN ("
                       "  SELECT min(id) FROM runs WHERE cluster = $1 GROUP BY hosts_digest)",
                       query.cluster)) {
    host_lists.emplace(row[0].as<std::string>(),
                       std::make_shared<const HostList::Hosts>(PgTextArrayField(row[1])));
  }
  input.runs.reserve(runs.size());
  for (const auto& [key, i] : order) {
    const pqxx::row row = runs[i];
    RunView r;
    std::string hosts_digest;
    ReadColumns(row, 0, &r.id, &r.started_at, &r.source, &r.backend, &r.collective, &r.dtype,
                &r.nodes, &r.ranks, &r.ranks_per_node, &hosts_digest, &r.network, &r.transports,
                &r.gdrdma, &r.nccl_version, &r.sweep_id, &r.link_straggler_host, &r.status,
                OrZero{&r.oversubscribed}, &r.max_ranks_per_machine, &r.cpus_per_machine, &r.oob_ok,
                &r.oob_count, &r.cuda_version, &r.driver_version, OrZero{&r.nccl_env_json},
                OrZero{&r.node_facts_json}, &r.net_plugin, &r.iters);
    r.started_at_iso = IsoFromSeconds(r.started_at, IsoStyle::kSeconds);
    r.hosts = HostList(host_lists.at(hosts_digest));
    input.runs.push_back(std::move(r));
  }
  if (query.since) {
    input.judge_from =
        txn.exec_params1("SELECT extract(epoch FROM $1::timestamptz)::float8", *query.since)[0]
            .as<double>();
  } else if (!input.runs.empty()) {
    input.judge_from =
        static_cast<double>(NightOf(input.runs.back().started_at)) * 86400.0 + 12 * 3600.0;
  }

  // Inspector jobs ended or ingested since judge_from, with their groups
  // (before the summarised history: which runs job_fabric compares a job
  // with are read in full).
  {
    std::map<int64_t, size_t> at;
    for (const pqxx::row& row : txn.exec_params(
             "SELECT id, job_id, extract(epoch FROM started_at)::float8, "
             "extract(epoch FROM ended_at)::float8, extract(epoch FROM ingested_at)::float8, "
             "nnodes, nranks FROM inspector_jobs WHERE cluster = $1 AND "
             "greatest(ended_at, ingested_at) >= to_timestamp($2::float8) ORDER BY id",
             query.cluster, input.judge_from)) {
      InspectorJobView job;
      ReadColumns(row, 0, &job.id, &job.job_id, &job.started_at, &job.ended_at, &job.ingested_at,
                  &job.nnodes, &job.nranks);
      at[job.id] = input.inspector_jobs.size();
      input.inspector_jobs.push_back(std::move(job));
    }
    std::vector<int64_t> job_ids;
    for (const auto& [id, i] : at) job_ids.push_back(id);
    for (const pqxx::row& row : txn.exec_params(
             "SELECT job_id, communicator, collective, message_bytes, nranks, count, median_us, "
             "median_busbw_gbps, slowest_rank, slowest_rank_host, slowest_rank_ratio, "
             "slowest_host, slowest_host_ratio FROM inspector_collectives "
             "WHERE job_id = ANY($1::bigint[]) ORDER BY job_id, collective, message_bytes",
             PgBigintArrayLiteral(job_ids))) {
      InspectorGroupView g;
      ReadColumns(row, 1, &g.communicator, &g.collective, &g.message_bytes, &g.nranks, &g.count,
                  &g.median_us, &g.median_busbw_gbps, &g.slowest_rank, &g.slowest_rank_host,
                  &g.slowest_rank_ratio, &g.slowest_host, &g.slowest_host_ratio);
      input.inspector_jobs[at.at(Must<int64_t>(row[0]))].groups.push_back(std::move(g));
    }
  }
  // Summarised history (schema 015): valid when the runs it was computed
  // over are the runs stored now up to the newest one it saw.
  std::optional<std::string> results_of;  // bigint[] literal; unset: every run
  if (query.summarized_results) {
    pqxx::result state = txn.exec_params(
        "SELECT extract(epoch FROM through_started_at)::float8, runs_digest "
        "FROM analysis_summary_state WHERE cluster = $1",
        query.cluster);
    if (!state.empty() &&
        RunsDigestThrough(input.runs, Must<double>(state[0][0])) == state[0][1].as<std::string>()) {
      const double through = Must<double>(state[0][0]);
      bool any = false;
      for (RunView& r : input.runs) {
        r.summarized = r.started_at <= through && !input.Judged(r);
        any = any || r.summarized;
      }
      // Nothing older than the judged runs is summarised (a full re-analysis
      // with --since): every row is read, as without summaries.
      if (any) {
        for (const pqxx::row& row : txn.exec_params(
                 "SELECT s.run_id, s.summary_text FROM analysis_run_summaries s "
                 "JOIN runs r ON r.id = s.run_id WHERE r.cluster = $1 "
                 "AND r.started_at <= (SELECT through_started_at FROM analysis_summary_state "
                 "WHERE cluster = $1) AND r.started_at < (SELECT to_timestamp($2::float8))",
                 query.cluster, input.judge_from)) {
          // The text stored beside the jsonb (migration 025: the same cast,
          // made once when written instead of on every read). A row that is
          // not what StoreRunSummaries writes is no summary: the detectors
          // that need it miss and the full history is read.
          auto figures = ParseRunFiguresText(std::string_view(row[1].c_str(), row[1].size()));
          if (figures) input.summaries[Must<int64_t>(row[0])] = std::move(*figures);
        }
        std::vector<int64_t> needed = query.summarized_results(input);
        const std::unordered_set<int64_t> full(needed.begin(), needed.end());
        for (RunView& r : input.runs) r.results_loaded = full.contains(r.id);
        results_of = PgBigintArrayLiteral(needed);
      }
    }
  }
  input.runs_digest = RunsDigest(input.runs);

  // Results of every run of the cluster: the history is the baseline. One
  // query, three years of nightly sweeps are ~10^5..10^6 rows; the analyzer
  // groups them. The straggler and #wrong columns only matter for the judged
  // runs (latency_jitter, run_failure): history rows leave them NULL, which
  // spares a string per row. Judged is compared as timestamps against one
  // converted bound: extract(epoch ...) is numeric since PostgreSQL 14, and
  // converting it per row tripled the query's server time.
  const std::string results_sql =
      "SELECT x.run_id, x.size_bytes, x.oop_time_us, x.oop_busbw_gbps, x.lat_p50_us, "
      "x.lat_p99_us, x.lat_cv, "
      "CASE WHEN j THEN x.straggler_host END, CASE WHEN j THEN x.straggler_excess_us END, "
      "CASE WHEN j THEN greatest(x.oop_wrong, x.ip_wrong) END "
      "FROM run_results x JOIN ("
      "  SELECT id, started_at >= (SELECT to_timestamp($2::float8)) AS j FROM runs "
      "  WHERE cluster = $1 AND " +
      std::string(kNotAbSideB) +
      " AND ($3::bigint[] IS NULL OR id = ANY($3::bigint[]))) r "
      "ON r.id = x.run_id";
  pqxx::result results =
      results_of ? txn.exec_params(results_sql, query.cluster, input.judge_from, *results_of)
                 : txn.exec_params(results_sql, query.cluster, input.judge_from, nullptr);
  input.results.reserve(results.size());
  for (const pqxx::row& row : results) {
    ResultPoint p;
    ReadColumns(row, 0, &p.run_id, &p.size_bytes, &p.time_us, &p.busbw_gbps, &p.lat_p50_us,
                &p.lat_p99_us, &p.lat_cv, &p.straggler_host, &p.straggler_excess_us, &p.wrong);
    input.results.push_back(std::move(p));
  }

  std::vector<int64_t> judged;
  for (const RunView& r : input.runs) {
    if (input.Judged(r)) judged.push_back(r.id);
  }
  const std::string ids = PgBigintArrayLiteral(judged);

  // A channel line is printed by the rank on its own host and names that
  // host's NIC: the sender's for "a -> b [send]" (and lines without a
  // direction), the receiver's for "a -> b [receive]", where the line's own
  // rank is b (`peer_rank`), not a, which may live on another node.
  for (const pqxx::row& row : txn.exec_params(
           "SELECT o.run_id, o.host, "
           "  CASE WHEN o.direction = 'receive' THEN o.peer_rank ELSE o.rank END AS local_rank, "
           "  o.family, o.nic_index, min(d.device), count(*), "
           "  count(*) FILTER (WHERE o.gdrdma) "
           "FROM transport_observations o LEFT JOIN run_net_devices d "
           "  ON d.run_id = o.run_id AND d.host = o.host AND d.nic_index = o.nic_index "
           "WHERE o.run_id = ANY($1::bigint[]) "
           "GROUP BY o.run_id, o.host, local_rank, o.family, o.nic_index",
           ids)) {
    ChannelUse c;
    ReadColumns(row, 0, &c.run_id, &c.host, &c.rank, &c.family, &c.nic_index, &c.device,
                &c.channels, &c.gdrdma_channels);
    input.channels.push_back(std::move(c));
  }
  // Failure and network lines of the judged runs (migration 009).
  for (const pqxx::row& row :
       txn.exec_params("SELECT run_id, level, line, host, text FROM run_log_events "
                       "WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, seq",
                       ids)) {
    LogEventView e;
    ReadColumns(row, 0, &e.run_id, &e.level, &e.line, &e.host, &e.text);
    input.log_events.push_back(std::move(e));
  }
  for (const pqxx::row& row :
       txn.exec_params("SELECT run_id, host, nic_index, device, link FROM run_net_devices "
                       "WHERE run_id = ANY($1::bigint[])",
                       ids)) {
    input.net_devices.push_back({Must<int64_t>(row[0]), row[1].as<std::string>(), Must<int>(row[2]),
                                 row[3].as<std::string>(), Get<std::string>(row[4])});
  }
  // Inventory: every port of the cluster with its newest sample (kept on
  // the port's row by the writer, schema 018). The rows below name their
  // port by id and take host, device and port from here: joining the port
  // names into a night of 4096 nodes x 8 HCAs cost a third of the query.
  std::unordered_map<int, size_t> inventory_at;
  for (const pqxx::row& row : txn.exec_params(
           "SELECT id, newest_sample_run_id, date_part('epoch', newest_sample_at), host, "
           "device, port, link_layer, newest_sample_state, newest_sample_phys_state, "
           "coalesce(newest_sample_rate_gbps, rate_gbps) FROM ports WHERE cluster = $1",
           query.cluster)) {
    PortStateView s;
    ReadColumns(row, 1, &s.run_id, OrZero{&s.sampled_at}, &s.host, &s.device, &s.port,
                &s.link_layer, &s.state, &s.phys_state, &s.rate_gbps);
    inventory_at.emplace(Must<int>(row[0]), input.port_inventory.size());
    input.port_inventory.push_back(std::move(s));
  }
  // A port of another cluster in a run's rows (not written so, but not
  // excluded by the schema either) is looked up by id.
  std::unordered_map<int, PortStateView> other_ports;
  auto port_named = [&](const std::vector<int>& ids) {
    std::vector<int64_t> missing;
    for (int id : ids) {
      if (!inventory_at.contains(id) && !other_ports.contains(id)) missing.push_back(id);
    }
    if (missing.empty()) return;
    for (const pqxx::row& row :
         txn.exec_params("SELECT id, host, device, port, link_layer FROM ports WHERE id = ANY($1)",
                         PgBigintArrayLiteral(missing))) {
      PortStateView& s = other_ports[Must<int>(row[0])];
      ReadColumns(row, 1, &s.host, &s.device, &s.port, &s.link_layer);
    }
  };
  auto port_of = [&](int id) -> const PortStateView& {
    if (auto it = inventory_at.find(id); it != inventory_at.end()) {
      return input.port_inventory[it->second];
    }
    return other_ports.at(id);
  };
  // Rows of judged runs that name their port by id (column 1; run id in
  // column 0): `read` fills the rest, the port's names come from the
  // inventory.
  auto read_port_rows = [&]<typename View>(const std::string& sql, std::vector<View>* out,
                                           auto read) {
    std::vector<int> port_ids;
    for (const pqxx::row& row : txn.exec_params(sql, ids)) {
      View v = read(row);
      v.run_id = Must<int64_t>(row[0]);
      port_ids.push_back(Must<int>(row[1]));
      out->push_back(std::move(v));
    }
    port_named(port_ids);
    for (size_t i = 0; i < port_ids.size(); ++i) {
      const PortStateView& port = port_of(port_ids[i]);
      View& v = (*out)[out->size() - port_ids.size() + i];
      v.host = port.host;
      v.device = port.device;
      v.port = port.port;
      if constexpr (std::is_same_v<View, PortStateView>) v.link_layer = port.link_layer;
    }
  };
  // Counters that did not move say nothing a detector needs (a large night
  // has ~10^5 of them): only moved, unknown or saturated ones are loaded.
  // Nor do the traffic counters (bytes and packets, which move in every run:
  // 7 of every port's 9 moved counters on a healthy night), unless saturated.
  // The condition is spelled as the partial index run_port_deltas_moved_rows'
  // (migration 024; 010's before it), so that a night of 4096 nodes x 8 HCAs
  // reads its ~3% of rows through it rather than scanning the night, and the
  // columns read here are the ones that index keeps (an index-only scan:
  // keep them in step).
  read_port_rows(
      std::string("SELECT d.run_id, d.port_id, d.counter, d.delta, d.per_second, "
                  "d.saturated FROM run_port_deltas d WHERE d.run_id = ANY($1::bigint[]) "
                  "AND ") +
          kMovedPortDelta,
      &input.port_deltas, [](const pqxx::row& row) {
        PortDeltaView d;
        ReadColumns(row, 2, &d.counter, &d.delta, &d.per_second, &d.saturated);
        return d;
      });
  // Windows between two snapshots of a port that no run brackets (imported
  // dumps, `counters snapshot --store`; migration 014) ending in the judged
  // span (index run_port_deltas_snapshot_end): the same rows as a run's.
  for (const pqxx::row& row : txn.exec_params(
           std::string("SELECT extract(epoch FROM d.window_start)::float8, "
                       "extract(epoch FROM d.window_end)::float8, to_char(d.window_start AT TIME "
                       "ZONE 'UTC', ") +
               kIso + "), to_char(d.window_end AT TIME ZONE 'UTC', " + kIso +
               "), p.host, p.device, p.port, d.counter, d.delta, d.per_second, d.saturated "
               "FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
               "WHERE d.run_id IS NULL AND p.cluster = $1 AND "
               "d.window_end >= (SELECT to_timestamp($2::float8)) AND " +
               kMovedPortDelta + " ORDER BY p.host, p.device, p.port, d.window_end, d.counter",
           query.cluster, input.judge_from)) {
    SnapshotDeltaView s;
    PortDeltaView& d = s.delta;
    ReadColumns(row, 0, &s.window_start, &s.window_end, &s.window_start_iso, &s.window_end_iso,
                &d.host, &d.device, &d.port, &d.counter, &d.delta, &d.per_second, &d.saturated);
    input.snapshot_deltas.push_back(std::move(s));
  }
  input.snapshot_windows =
      txn.exec_params1(
             "SELECT count(DISTINCT (d.port_id, d.window_end)) FROM run_port_deltas d "
             "JOIN ports p ON p.id = d.port_id WHERE d.run_id IS NULL AND p.cluster = $1 AND "
             "d.window_end >= (SELECT to_timestamp($2::float8))",
             query.cluster, input.judge_from)[0]
          .as<int>();
  // The state each port was left in after a judged run.
  read_port_rows(
      "SELECT s.run_id, s.port_id, date_part('epoch', s.sampled_at), s.state, "
      "s.phys_state, s.rate_gbps FROM port_counter_samples s "
      "WHERE s.run_id = ANY($1::bigint[]) AND s.phase = 'after'",
      &input.port_states, [](const pqxx::row& row) {
        PortStateView s;
        ReadColumns(row, 2, OrZero{&s.sampled_at}, &s.state, &s.phys_state, &s.rate_gbps);
        return s;
      });
  // Step-mode summaries of every run (the history is their baseline too).
  for (const pqxx::row& row : txn.exec_params(
           "SELECT s.run_id, s.model_params, s.grad_dtype, s.bucket_bytes, s.forward_ms, "
           "s.backward_ms, s.step_ms_p50, s.step_ms_p99, s.compute_ms_p50, s.exposed_ms_p50, "
           "s.idle_share_p50 FROM step_results s JOIN runs r ON r.id = s.run_id "
           "WHERE r.cluster = $1 AND " +
               std::string(kNotAbSideB),
           query.cluster)) {
    StepView v;
    ReadColumns(row, 0, &v.run_id, &v.model_params, &v.grad_dtype, &v.bucket_bytes, &v.forward_ms,
                &v.backward_ms, &v.step_ms_p50, &v.step_ms_p99, &v.compute_ms_p50,
                &v.exposed_ms_p50, &v.idle_share_p50);
    input.steps.push_back(std::move(v));
  }
  // The newest locate verdicts, and those of the judged window (up to 100).
  for (StoredLocate& s : ReadLocateVerdicts(txn, query.cluster, 10 * kLocateVerdicts)) {
    if (input.locate_verdicts.size() >= size_t{kLocateVerdicts} && s.located_at < input.judge_from)
      break;
    input.locate_verdicts.push_back({s.id, s.located_at, std::move(s.record)});
  }
  input.fleet_topologies = ReadFleetTopologies(txn, query.cluster);
  // The switch side of the judged runs' windows (schema 021); a row that no
  // longer reads is skipped (it names itself in the reader's problems).
  input.run_fabric_windows = ReadRunFabricWindows(txn, judged, nullptr);
  // Jobs `ras watch` judged in the window (schema 022), at most 100.
  for (StoredRasJobVerdict& v : ReadRasJobVerdicts(txn, query.cluster, input.judge_from, 100)) {
    input.ras_jobs.push_back(
        {std::move(v.job_id), v.judged_at, std::move(v.first_stuck_at), std::move(v.verdict)});
  }
  // Each node's CPUs over the judged runs (schema 023).
  input.run_cpu_windows = ReadRunCpuWindows(txn, judged);
  return input;
}

}  // namespace fabtrack::store
