#include "store/analysis_reader.h"

#include <charconv>
#include <cmath>
#include <map>
#include <pqxx/pqxx>
#include <sstream>
#include <type_traits>

#include "core/clock.h"

namespace fabtrack::store {
namespace {

template <typename T>
std::optional<T> Get(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    // libpqxx 6.4 converts numbers through iostreams; a year of history is
    // ~10^6 numbers, so parse the text directly.
    T value{};
    const char* text = f.c_str();
    auto [end, ec] = std::from_chars(text, text + f.size(), value);
    if (ec != std::errc() || end != text + f.size()) return f.as<T>();
    return value;
  } else {
    return f.as<T>();
  }
}

template <typename T>
T Must(const pqxx::field& f) {
  return Get<T>(f).value();
}

std::vector<std::string> TextArray(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  // Host lists of big runs have thousands of plain names: split them
  // directly; anything quoted or escaped goes through libpqxx's parser.
  std::string_view text(f.c_str(), f.size());
  if (text.size() >= 2 && text.front() == '{' && text.back() == '}' &&
      text.find_first_of("\"\\") == std::string_view::npos) {
    text = text.substr(1, text.size() - 2);
    while (!text.empty()) {
      size_t comma = text.find(',');
      out.emplace_back(text.substr(0, comma));
      if (comma == std::string_view::npos) break;
      text.remove_prefix(comma + 1);
    }
    return out;
  }
  pqxx::array_parser parser = f.as_array();
  for (auto [kind, value] = parser.get_next(); kind != pqxx::array_parser::done;
       std::tie(kind, value) = parser.get_next()) {
    if (kind == pqxx::array_parser::string_value) out.push_back(value);
  }
  return out;
}

// "{1,2,3}": the judged run ids as one bigint[] parameter.
std::string IdArray(const std::vector<int64_t>& ids) {
  std::ostringstream out;
  out << '{';
  for (size_t i = 0; i < ids.size(); ++i) out << (i ? "," : "") << ids[i];
  out << '}';
  return out.str();
}

constexpr const char* kIso = "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'";

}  // namespace

std::vector<std::string> ClustersWithRuns(pqxx::connection_base& connection) {
  pqxx::read_transaction txn(connection);
  std::vector<std::string> out;
  for (const pqxx::row& row : txn.exec("SELECT DISTINCT cluster FROM runs ORDER BY 1")) {
    out.push_back(row[0].as<std::string>());
  }
  return out;
}

AnalysisInput LoadAnalysisInput(pqxx::connection_base& connection, const AnalysisQuery& query) {
  pqxx::read_transaction txn(connection);
  AnalysisInput input;
  pqxx::result cluster = txn.exec_params(
      "SELECT name, fabric, rail_optimized FROM clusters WHERE name = $1", query.cluster);
  if (cluster.empty()) throw UnknownCluster("no cluster named '" + query.cluster + "'");
  input.cluster.name = query.cluster;
  input.cluster.fabric = Get<std::string>(cluster[0][1]);
  input.cluster.rail_optimized = Get<bool>(cluster[0][2]);

  pqxx::result runs = txn.exec_params(
      std::string("SELECT id, extract(epoch FROM started_at)::float8, to_char(started_at AT TIME "
                  "ZONE 'UTC', ") +
          kIso +
          "), source, backend, collective, dtype, nodes, ranks, ranks_per_node, hosts, network, "
          "transports, gdrdma, nccl_version, sweep_id, link_straggler_host, status, "
          "oversubscribed, max_ranks_per_machine, cpus_per_machine, oob_ok, oob_count "
          "FROM runs WHERE cluster = $1 "
          "ORDER BY started_at, id",
      query.cluster);
  input.runs.reserve(runs.size());
  for (const pqxx::row& row : runs) {
    RunView r;
    r.id = Must<int64_t>(row[0]);
    r.started_at = Must<double>(row[1]);
    r.started_at_iso = row[2].as<std::string>();
    r.source = row[3].as<std::string>();
    r.backend = Get<std::string>(row[4]);
    r.collective = Get<std::string>(row[5]);
    r.dtype = Get<std::string>(row[6]);
    r.nodes = Get<int>(row[7]);
    r.ranks = Get<int>(row[8]);
    r.ranks_per_node = Get<int>(row[9]);
    r.hosts = TextArray(row[10]);
    r.network = Get<std::string>(row[11]);
    r.transports = TextArray(row[12]);
    r.gdrdma = Get<bool>(row[13]);
    r.nccl_version = Get<std::string>(row[14]);
    r.sweep_id = Get<std::string>(row[15]);
    r.link_straggler_host = Get<std::string>(row[16]);
    r.status = row[17].as<std::string>();
    r.oversubscribed = Get<bool>(row[18]).value_or(false);
    r.max_ranks_per_machine = Get<int>(row[19]);
    r.cpus_per_machine = Get<int>(row[20]);
    r.oob_ok = Get<bool>(row[21]);
    r.oob_count = Get<int64_t>(row[22]);
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

  // Results of every run of the cluster: the history is the baseline. One
  // query, a year of nightly sweeps is ~10^5 rows; the analyzer groups them.
  pqxx::result results = txn.exec_params(
      "SELECT x.run_id, x.size_bytes, x.oop_time_us, x.oop_busbw_gbps, x.lat_p50_us, "
      "x.lat_p99_us, x.lat_cv, x.straggler_host, x.straggler_excess_us, "
      "greatest(x.oop_wrong, x.ip_wrong) "
      "FROM run_results x JOIN runs r ON r.id = x.run_id WHERE r.cluster = $1",
      query.cluster);
  input.results.reserve(results.size());
  for (const pqxx::row& row : results) {
    ResultPoint p;
    p.run_id = Must<int64_t>(row[0]);
    p.size_bytes = Must<int64_t>(row[1]);
    p.time_us = Get<double>(row[2]);
    p.busbw_gbps = Get<double>(row[3]);
    p.lat_p50_us = Get<double>(row[4]);
    p.lat_p99_us = Get<double>(row[5]);
    p.lat_cv = Get<double>(row[6]);
    p.straggler_host = Get<std::string>(row[7]);
    p.straggler_excess_us = Get<double>(row[8]);
    p.wrong = Get<int64_t>(row[9]);
    input.results.push_back(std::move(p));
  }

  std::vector<int64_t> judged;
  for (const RunView& r : input.runs) {
    if (input.Judged(r)) judged.push_back(r.id);
  }
  const std::string ids = IdArray(judged);

  for (const pqxx::row& row : txn.exec_params(
           "SELECT o.run_id, o.host, o.rank, o.family, o.nic_index, min(d.device), count(*), "
           "count(*) FILTER (WHERE o.gdrdma) "
           "FROM transport_observations o LEFT JOIN run_net_devices d "
           "  ON d.run_id = o.run_id AND d.host = o.host AND d.nic_index = o.nic_index "
           "WHERE o.run_id = ANY($1::bigint[]) "
           "GROUP BY o.run_id, o.host, o.rank, o.family, o.nic_index",
           ids)) {
    ChannelUse c;
    c.run_id = Must<int64_t>(row[0]);
    c.host = Get<std::string>(row[1]);
    c.rank = Must<int>(row[2]);
    c.family = row[3].as<std::string>();
    c.nic_index = Get<int>(row[4]);
    c.device = Get<std::string>(row[5]);
    c.channels = Must<int>(row[6]);
    c.gdrdma_channels = Must<int>(row[7]);
    input.channels.push_back(std::move(c));
  }
  // Failure and network lines of the judged runs (migration 009).
  for (const pqxx::row& row :
       txn.exec_params("SELECT run_id, level, line, host, text FROM run_log_events "
                       "WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, seq",
                       ids)) {
    LogEventView e;
    e.run_id = Must<int64_t>(row[0]);
    e.level = row[1].as<std::string>();
    e.line = Get<int>(row[2]);
    e.host = Get<std::string>(row[3]);
    e.text = row[4].as<std::string>();
    input.log_events.push_back(std::move(e));
  }
  for (const pqxx::row& row :
       txn.exec_params("SELECT run_id, host, nic_index, device, link FROM run_net_devices "
                       "WHERE run_id = ANY($1::bigint[])",
                       ids)) {
    input.net_devices.push_back({Must<int64_t>(row[0]), row[1].as<std::string>(), Must<int>(row[2]),
                                 row[3].as<std::string>(), Get<std::string>(row[4])});
  }
  // Counters that did not move say nothing a detector needs (a large night
  // has ~10^5 of them): only moved, unknown or saturated ones are loaded.
  for (const pqxx::row& row : txn.exec_params(
           "SELECT d.run_id, p.host, p.device, p.port, d.counter, d.delta, d.per_second, "
           "d.saturated FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
           "WHERE d.run_id = ANY($1::bigint[]) AND (d.delta IS DISTINCT FROM 0 OR d.saturated)",
           ids)) {
    PortDeltaView d;
    d.run_id = Must<int64_t>(row[0]);
    d.host = row[1].as<std::string>();
    d.device = row[2].as<std::string>();
    d.port = Must<int>(row[3]);
    d.counter = row[4].as<std::string>();
    d.delta = Get<int64_t>(row[5]);
    d.per_second = Get<double>(row[6]);
    d.saturated = row[7].as<bool>();
    input.port_deltas.push_back(std::move(d));
  }
  // The state each port was left in after a judged run.
  auto port_state = [](const pqxx::row& row) {
    PortStateView s;
    s.run_id = Get<int64_t>(row[0]);
    s.sampled_at = Get<double>(row[1]).value_or(0);
    s.host = row[2].as<std::string>();
    s.device = row[3].as<std::string>();
    s.port = Must<int>(row[4]);
    s.link_layer = Get<std::string>(row[5]);
    s.state = Get<std::string>(row[6]);
    s.phys_state = Get<std::string>(row[7]);
    s.rate_gbps = Get<double>(row[8]);
    return s;
  };
  for (const pqxx::row& row : txn.exec_params(
           "SELECT s.run_id, extract(epoch FROM s.sampled_at)::float8, p.host, p.device, p.port, "
           "p.link_layer, s.state, s.phys_state, s.rate_gbps "
           "FROM port_counter_samples s JOIN ports p ON p.id = s.port_id "
           "WHERE s.run_id = ANY($1::bigint[]) AND s.phase = 'after'",
           ids)) {
    input.port_states.push_back(port_state(row));
  }
  // Inventory: every port of the cluster with its newest sample.
  for (const pqxx::row& row : txn.exec_params(
           "SELECT s.run_id, extract(epoch FROM s.sampled_at)::float8, p.host, p.device, p.port, "
           "p.link_layer, s.state, s.phys_state, coalesce(s.rate_gbps, p.rate_gbps) "
           "FROM ports p LEFT JOIN LATERAL ("
           "  SELECT run_id, sampled_at, state, phys_state, rate_gbps FROM port_counter_samples "
           "  WHERE port_id = p.id ORDER BY sampled_at DESC LIMIT 1) s ON true "
           "WHERE p.cluster = $1",
           query.cluster)) {
    input.port_inventory.push_back(port_state(row));
  }
  // Inspector jobs ended or ingested since judge_from, with their groups.
  {
    std::map<int64_t, size_t> at;
    for (const pqxx::row& row : txn.exec_params(
             "SELECT id, job_id, extract(epoch FROM started_at)::float8, "
             "extract(epoch FROM ended_at)::float8, extract(epoch FROM ingested_at)::float8, "
             "nnodes, nranks FROM inspector_jobs WHERE cluster = $1 AND "
             "greatest(ended_at, ingested_at) >= to_timestamp($2::float8) ORDER BY id",
             query.cluster, input.judge_from)) {
      InspectorJobView job;
      job.id = Must<int64_t>(row[0]);
      job.job_id = row[1].as<std::string>();
      job.started_at = Get<double>(row[2]);
      job.ended_at = Get<double>(row[3]);
      job.ingested_at = Must<double>(row[4]);
      job.nnodes = Get<int>(row[5]);
      job.nranks = Get<int>(row[6]);
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
             IdArray(job_ids))) {
      InspectorGroupView g;
      g.communicator = row[1].as<std::string>();
      g.collective = row[2].as<std::string>();
      g.message_bytes = Must<int64_t>(row[3]);
      g.nranks = Get<int>(row[4]);
      g.count = Must<int64_t>(row[5]);
      g.median_us = Must<double>(row[6]);
      g.median_busbw_gbps = Get<double>(row[7]);
      g.slowest_rank = Get<int>(row[8]);
      g.slowest_rank_host = Get<std::string>(row[9]);
      g.slowest_rank_ratio = Get<double>(row[10]);
      g.slowest_host = Get<std::string>(row[11]);
      g.slowest_host_ratio = Get<double>(row[12]);
      input.inspector_jobs[at.at(Must<int64_t>(row[0]))].groups.push_back(std::move(g));
    }
  }
  // Step-mode summaries of every run (the history is their baseline too).
  for (const pqxx::row& row : txn.exec_params(
           "SELECT s.run_id, s.model_params, s.grad_dtype, s.bucket_bytes, s.forward_ms, "
           "s.backward_ms, s.step_ms_p50, s.step_ms_p99, s.compute_ms_p50, s.exposed_ms_p50, "
           "s.idle_share_p50 FROM step_results s JOIN runs r ON r.id = s.run_id "
           "WHERE r.cluster = $1",
           query.cluster)) {
    StepView v;
    v.run_id = Must<int64_t>(row[0]);
    v.model_params = Must<int64_t>(row[1]);
    v.grad_dtype = row[2].as<std::string>();
    v.bucket_bytes = Must<int64_t>(row[3]);
    v.forward_ms = Must<double>(row[4]);
    v.backward_ms = Must<double>(row[5]);
    v.step_ms_p50 = Must<double>(row[6]);
    v.step_ms_p99 = Must<double>(row[7]);
    v.compute_ms_p50 = Must<double>(row[8]);
    v.exposed_ms_p50 = Must<double>(row[9]);
    v.idle_share_p50 = Must<double>(row[10]);
    input.steps.push_back(std::move(v));
  }
  return input;
}

}  // namespace fabtrack::store
