#include "store/snapshot_deltas.h"

#include <optional>
#include <pqxx/pqxx>

#include "core/counter_deltas.h"
#include "core/json_instances.h"
#include "store/copy_row.h"
#include "store/port_writer.h"

namespace fabtrack::store {
namespace {

// One stored snapshot of a port, as ComputeDeltas reads it.
struct StoredSnapshot {
  std::string at;  // sampled_at as PostgreSQL prints it: it parses back to the same instant
  double epoch = 0;
  PortSample port;
};

std::map<std::string, uint64_t> CounterMap(const pqxx::field& f) {
  std::map<std::string, uint64_t> out;
  if (f.is_null()) return out;
  const nlohmann::json values = nlohmann::json::parse(f.c_str());
  for (const auto& [name, value] : values.items()) {
    if (value.is_number_unsigned()) out[name] = value.get<uint64_t>();
  }
  return out;
}

std::optional<uint64_t> Unsigned(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  return static_cast<uint64_t>(f.as<int64_t>());
}

// The port's snapshot that `where` picks ($1 port id, $2 the new snapshot's
// time), among those no run brackets.
std::optional<StoredSnapshot> ReadSnapshot(pqxx::transaction_base& txn, int port_id,
                                           const std::string& sampled_at, const PortSample& port,
                                           const std::string& where_and_order) {
  pqxx::result r = txn.exec_params(
      "SELECT sampled_at::text, extract(epoch FROM sampled_at)::float8, counters::text, "
      "hw_counters::text, ethtool::text, xmit_bytes, rcv_bytes, saturated "
      "FROM port_counter_samples WHERE port_id = $1::int AND phase = 'snapshot' AND run_id IS "
      "NULL AND " +
          where_and_order + " LIMIT 1",
      port_id, sampled_at);
  if (r.empty()) return std::nullopt;
  const pqxx::row& row = r[0];
  StoredSnapshot s;
  s.at = row[0].as<std::string>();
  s.epoch = row[1].as<double>();
  s.port.device = port.device;
  s.port.port = port.port;
  s.port.counters = CounterMap(row[2]);
  s.port.hw_counters = CounterMap(row[3]);
  s.port.ethtool = CounterMap(row[4]);
  s.port.xmit_bytes = Unsigned(row[5]);
  s.port.rcv_bytes = Unsigned(row[6]);
  s.port.saturated = PgTextArrayField(row[7]);
  return s;
}

size_t WriteWindow(pqxx::transaction_base& txn, const std::string& host, int port_id,
                   const StoredSnapshot& before, const StoredSnapshot& after) {
  PortDeltas deltas = ComputeDeltas(HostPorts{host, {before.port}, {}},
                                    HostPorts{host, {after.port}, {}}, after.epoch - before.epoch);
  const std::map<std::string, int> ids{
      {after.port.device + "/" + std::to_string(after.port.port), port_id}};
  WritePortDeltaRows(txn, ids, deltas, std::nullopt, before.at, after.at);
  return 1;
}

}  // namespace

size_t WriteSnapshotPortDeltas(pqxx::transaction_base& txn, const std::string& cluster,
                               const HostPorts& host, const std::string& sampled_at) {
  size_t windows = 0;
  for (const PortSample& port : host.ports) {
    pqxx::result id = txn.exec_params(
        "SELECT id FROM ports WHERE cluster = $1 AND host = $2 AND device = $3 AND port = $4::int",
        cluster, host.host, port.device, port.port);
    if (id.empty()) continue;
    const int port_id = id[0][0].as<int>();
    // What is stored at this time: a sample already there (the same file
    // imported again) was kept, not replaced.
    std::optional<StoredSnapshot> now =
        ReadSnapshot(txn, port_id, sampled_at, port, "sampled_at = $2::timestamptz");
    if (!now) continue;  // a run's before/after sample holds this time
    std::optional<StoredSnapshot> previous = ReadSnapshot(
        txn, port_id, sampled_at, port, "sampled_at < $2::timestamptz ORDER BY sampled_at DESC");
    std::optional<StoredSnapshot> next = ReadSnapshot(
        txn, port_id, sampled_at, port, "sampled_at > $2::timestamptz ORDER BY sampled_at");
    // The windows ending at this snapshot and at the next: one spanning
    // this time (previous -> next) is replaced by the two either side of it.
    // Through the owner's function: a writer may not delete (migration 014).
    txn.exec_params(
        "SELECT fabtrack_clear_snapshot_windows($1::int, ARRAY[$2::timestamptz, $3::timestamptz])",
        port_id, now->at, next ? next->at : now->at);
    if (previous) windows += WriteWindow(txn, host.host, port_id, *previous, *now);
    if (next) windows += WriteWindow(txn, host.host, port_id, *now, *next);
  }
  return windows;
}

}  // namespace fabtrack::store
