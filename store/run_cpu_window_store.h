// Each node's CPUs over a sweep run's window in PostgreSQL (schema 023): one
// row per run and host (core/node_cpu.h's NodeCpuWindow).
#pragma once

#include <cstdint>
#include <map>
#include <pqxx/transaction_base>
#include <vector>

#include "core/node_cpu.h"

namespace fabtrack::store {

// Stores (or replaces) the run's windows.
void WriteRunCpuWindows(pqxx::transaction_base& txn, int64_t run_id,
                        const std::vector<NodeCpuWindow>& windows);

// The windows of these runs by run id, each run's hosts in name order.
std::map<int64_t, std::vector<NodeCpuWindow>> ReadRunCpuWindows(
    pqxx::transaction_base& txn, const std::vector<int64_t>& run_ids);

}  // namespace fabtrack::store
