#include "store/port_writer.h"

#include <array>
#include <pqxx/pqxx>

#include "core/json_instances.h"
#include "store/copy_row.h"
#include "store/run_writer.h"

namespace fabtrack::store {
namespace {

std::optional<int64_t> Counter(const PortSample& p, const std::string& name) {
  auto it = p.counters.find(name);
  if (it == p.counters.end()) return std::nullopt;
  // bigint is signed: a counter past 2^63 is clamped rather than wrapped negative.
  return static_cast<int64_t>(std::min<uint64_t>(it->second, INT64_MAX));
}

std::optional<int64_t> Clamp(const std::optional<uint64_t>& v) {
  if (!v) return std::nullopt;
  return static_cast<int64_t>(std::min<uint64_t>(*v, INT64_MAX));
}

std::string JsonText(const std::map<std::string, uint64_t>& values) {
  return nlohmann::json(values).dump();
}

}  // namespace

int UpsertPort(pqxx::transaction_base& txn, const std::string& cluster, const std::string& host,
               const PortSample& port) {
  EnsureCluster(txn, cluster);
  CopyRow p;
  p.Text(cluster)
      .Text(host)
      .Text(port.device)
      .Int(static_cast<int64_t>(port.port))
      .Text(port.link_layer)
      .Text(port.netdev)
      .Text(port.node_guid)
      .Text(port.fw_version)
      .Text(port.board_id)
      .Real(port.rate_gbps);
  pqxx::row row = txn.exec_params1(
      "INSERT INTO ports (cluster, host, device, port, link_layer, netdev, node_guid, fw_version, "
      "board_id, rate_gbps) VALUES ($1, $2, $3, $4::int, $5, $6, $7, $8, $9, $10::float8) "
      "ON CONFLICT (cluster, host, device, port) DO UPDATE SET "
      "link_layer = coalesce(EXCLUDED.link_layer, ports.link_layer), "
      "netdev = coalesce(EXCLUDED.netdev, ports.netdev), "
      "node_guid = coalesce(EXCLUDED.node_guid, ports.node_guid), "
      "fw_version = coalesce(EXCLUDED.fw_version, ports.fw_version), "
      "board_id = coalesce(EXCLUDED.board_id, ports.board_id), "
      "rate_gbps = coalesce(EXCLUDED.rate_gbps, ports.rate_gbps), last_seen = now() "
      "RETURNING id",
      pqxx::prepare::make_dynamic_params(p.fields()));
  return row[0].as<int>();
}

void WriteCounterSample(pqxx::transaction_base& txn, int port_id, const std::string& sampled_at,
                        const std::optional<int64_t>& run_id, const std::string& phase,
                        const PortSample& port) {
  CopyRow p;
  p.Int(static_cast<int64_t>(port_id))
      .Text(sampled_at)
      .Int(run_id)
      .Text(phase)
      .Text(port.state)
      .Text(port.phys_state)
      .Real(port.rate_gbps)
      .Int(Clamp(port.xmit_bytes))
      .Int(Clamp(port.rcv_bytes))
      .Int(Counter(port, "port_xmit_packets"))
      .Int(Counter(port, "port_rcv_packets"));
  std::string columns, values;
  int n = 11;
  // The counters that get their own column (the ones dashboards and the
  // analyzer query); all of them also stay in the jsonb `counters`.
  auto column = [&](const std::string& c) {
    p.Int(Counter(port, c));
    columns += ", " + (c == "VL15_dropped" ? std::string("vl15_dropped") : c);
    values += ", $" + std::to_string(++n) + "::bigint";
  };
  for (const char* c : kPortErrorCounters) column(c);
  column("port_xmit_wait");
  p.Text(JsonText(port.counters))
      .Text(JsonText(port.hw_counters))
      .Text(JsonText(port.ethtool))
      .TextArray(port.saturated);
  // The inventory row keeps the port's newest sample (schema 018): set in the
  // same statement, unless an older sample (an imported dump) arrives late.
  txn.exec_params0(
      "WITH sample AS (INSERT INTO port_counter_samples (port_id, sampled_at, run_id, phase, "
      "state, phys_state, rate_gbps, xmit_bytes, rcv_bytes, xmit_packets, rcv_packets" +
          columns +
          ", counters, hw_counters, ethtool, saturated) VALUES ($1::int, $2::timestamptz, "
          "$3::bigint, $4, "
          "$5, $6, $7::float8, $8::bigint, $9::bigint, $10::bigint, $11::bigint" +
          values + ", $" + std::to_string(n + 1) + "::jsonb, $" + std::to_string(n + 2) +
          "::jsonb, $" + std::to_string(n + 3) + "::jsonb, $" + std::to_string(n + 4) +
          "::text[]) ON CONFLICT (port_id, sampled_at) DO NOTHING "
          "RETURNING port_id, sampled_at, run_id, state, phys_state, rate_gbps) "
          "UPDATE ports p SET newest_sample_at = s.sampled_at, newest_sample_run_id = s.run_id, "
          "newest_sample_state = s.state, newest_sample_phys_state = s.phys_state, "
          "newest_sample_rate_gbps = s.rate_gbps FROM sample s WHERE p.id = s.port_id AND "
          "(p.newest_sample_at IS NULL OR p.newest_sample_at <= s.sampled_at)",
      pqxx::prepare::make_dynamic_params(p.fields()));
}

size_t WriteHostSample(pqxx::transaction_base& txn, const std::string& cluster,
                       const HostPorts& host, const std::string& sampled_at,
                       const std::optional<int64_t>& run_id, const std::string& phase) {
  // This month's and next month's partitions exist before the rows arrive
  // (a no-op after the first call of the month).
  txn.exec_params(
      "SELECT fabtrack_ensure_counter_partitions(date_trunc('month', $1::timestamptz)::date, "
      "(date_trunc('month', $1::timestamptz) + interval '1 month')::date)",
      sampled_at);
  for (const PortSample& port : host.ports) {
    int id = UpsertPort(txn, cluster, host.host, port);
    WriteCounterSample(txn, id, sampled_at, run_id, phase, port);
  }
  return host.ports.size();
}

size_t WritePortDeltaRows(pqxx::transaction_base& txn, const std::map<std::string, int>& port_ids,
                          const PortDeltas& deltas, const std::optional<int64_t>& run_id,
                          const std::string& window_start, const std::string& window_end) {
  if (deltas.deltas.empty()) return 0;
  pqxx::stream_to stream(
      txn, "run_port_deltas",
      std::vector<std::string>{"run_id", "port_id", "counter", "delta", "per_second",
                               "window_start", "window_end", "saturated", "reset_seen"});
  size_t written = 0;
  std::array<CopyField, 9> fields;
  for (const CounterDelta& d : deltas.deltas) {
    auto id = port_ids.find(d.device + "/" + std::to_string(d.port));
    if (id == port_ids.end()) continue;
    CopyRow row;
    row.Int(run_id)
        .Int(static_cast<int64_t>(id->second))
        .Text(d.counter)
        .Int(d.delta ? std::optional<int64_t>(
                           static_cast<int64_t>(std::min<uint64_t>(*d.delta, INT64_MAX)))
                     : std::nullopt)
        .Real(d.per_second)
        .Text(window_start)
        .Text(window_end)
        .Bool(d.saturated)
        .Bool(d.reset_seen);
    std::move(row.mutable_fields().begin(), row.mutable_fields().end(), fields.begin());
    stream << fields;
    ++written;
  }
  stream.complete();
  return written;
}

size_t WriteRunPortDeltas(pqxx::transaction_base& txn, const std::string& cluster,
                          const HostPorts& after, const PortDeltas& deltas, int64_t run_id,
                          const std::string& window_start, const std::string& window_end) {
  std::map<std::string, int> port_ids;
  for (const PortSample& port : after.ports) {
    port_ids[port.device + "/" + std::to_string(port.port)] =
        UpsertPort(txn, cluster, after.host, port);
  }
  return WritePortDeltaRows(txn, port_ids, deltas, run_id, window_start, window_end);
}

}  // namespace fabtrack::store
