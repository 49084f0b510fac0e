// Port inventory and counter samples into PostgreSQL.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/transaction_base>
#include <string>

#include "core/port_sample.h"

namespace fabtrack::store {

// Inserts or refreshes the port's inventory row; returns its id.
int UpsertPort(pqxx::transaction_base& txn, const std::string& cluster, const std::string& host,
               const PortSample& port);

// One sample of one port. `phase`: "snapshot", "before", "after", "watch".
void WriteCounterSample(pqxx::transaction_base& txn, int port_id, const std::string& sampled_at,
                        const std::optional<int64_t>& run_id, const std::string& phase,
                        const PortSample& port);

// Every port of a host, in the caller's transaction. Returns samples written.
size_t WriteHostSample(pqxx::transaction_base& txn, const std::string& cluster,
                       const HostPorts& host, const std::string& sampled_at,
                       const std::optional<int64_t>& run_id, const std::string& phase);

// A run's per-port counter deltas (before/after window), keyed by the ports
// of `after` (upserted). Returns rows written.
// Counter delta rows (COPY) of the ports in `port_ids` ("mlx5_0/1" -> ports.id) over one
// window: a run's (`run_id`) or, without a run, the span between two snapshots.
size_t WritePortDeltaRows(pqxx::transaction_base& txn, const std::map<std::string, int>& port_ids,
                          const PortDeltas& deltas, const std::optional<int64_t>& run_id,
                          const std::string& window_start, const std::string& window_end);

size_t WriteRunPortDeltas(pqxx::transaction_base& txn, const std::string& cluster,
                          const HostPorts& after, const PortDeltas& deltas, int64_t run_id,
                          const std::string& window_start, const std::string& window_end);

}  // namespace fabtrack::store
