#include "store/analysis_reader.h"

#include <cmath>
#include <pqxx/pqxx>
#include <sstream>

#include "analyzer/input_index.h"

namespace fabtrack::store {
namespace {

template <typename T>
std::optional<T> Get(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return f.as<T>();
}

std::vector<std::string> TextArray(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
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

analyzer::AnalysisInput LoadAnalysisInput(pqxx::connection_base& connection,
                                          const AnalysisQuery& query) {
  using namespace analyzer;
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
          "transports, gdrdma, nccl_version, sweep_id, link_straggler_host, status "
          "FROM runs WHERE cluster = $1 ORDER BY started_at, id",
      query.cluster);
  input.runs.reserve(runs.size());
  for (const pqxx::row& row : runs) {
    RunView r;
    r.id = row[0].as<int64_t>();
    r.started_at = row[1].as<double>();
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

  // Results of every run of the cluster: the history is the baseline.
  // Streamed in one query; a year of nightly sweeps is ~10^5 rows.
  pqxx::result results = txn.exec_params(
      "SELECT x.run_id, x.size_bytes, x.oop_time_us, x.oop_busbw_gbps, x.lat_p50_us, "
      "x.lat_p99_us, x.lat_cv, x.straggler_host, x.straggler_excess_us "
      "FROM run_results x JOIN runs r ON r.id = x.run_id WHERE r.cluster = $1 "
      "ORDER BY x.run_id, x.size_bytes, x.row_index",
      query.cluster);
  input.results.reserve(results.size());
  for (const pqxx::row& row : results) {
    ResultPoint p;
    p.run_id = row[0].as<int64_t>();
    p.size_bytes = row[1].as<int64_t>();
    p.time_us = Get<double>(row[2]);
    p.busbw_gbps = Get<double>(row[3]);
    p.lat_p50_us = Get<double>(row[4]);
    p.lat_p99_us = Get<double>(row[5]);
    p.lat_cv = Get<double>(row[6]);
    p.straggler_host = Get<std::string>(row[7]);
    p.straggler_excess_us = Get<double>(row[8]);
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
    c.run_id = row[0].as<int64_t>();
    c.host = Get<std::string>(row[1]);
    c.rank = row[2].as<int>();
    c.family = row[3].as<std::string>();
    c.nic_index = Get<int>(row[4]);
    c.device = Get<std::string>(row[5]);
    c.channels = row[6].as<int>();
    c.gdrdma_channels = row[7].as<int>();
    input.channels.push_back(std::move(c));
  }
  for (const pqxx::row& row :
       txn.exec_params("SELECT run_id, host, nic_index, device, link FROM run_net_devices "
                       "WHERE run_id = ANY($1::bigint[])",
                       ids)) {
    input.net_devices.push_back({row[0].as<int64_t>(), row[1].as<std::string>(), row[2].as<int>(),
                                 row[3].as<std::string>(), Get<std::string>(row[4])});
  }
  for (const pqxx::row& row : txn.exec_params(
           "SELECT d.run_id, p.host, p.device, p.port, d.counter, d.delta, d.per_second, "
           "d.saturated FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
           "WHERE d.run_id = ANY($1::bigint[])",
           ids)) {
    PortDeltaView d;
    d.run_id = row[0].as<int64_t>();
    d.host = row[1].as<std::string>();
    d.device = row[2].as<std::string>();
    d.port = row[3].as<int>();
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
    s.port = row[4].as<int>();
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
  return input;
}

}  // namespace fabtrack::store
