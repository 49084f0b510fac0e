#include "store/run_cpu_window_store.h"

#include <pqxx/pqxx>

#include "store/copy_row.h"

namespace fabtrack::store {

void WriteRunCpuWindows(pqxx::transaction_base& txn, int64_t run_id,
                        const std::vector<NodeCpuWindow>& windows) {
  for (const NodeCpuWindow& w : windows) {
    txn.exec_params(
        "INSERT INTO run_cpu_windows (run_id, host, seconds, cpus, busy_fraction, "
        "steal_fraction, other_cpus, load1_before, load1_after, top_others) "
        "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10::jsonb) "
        "ON CONFLICT (run_id, host) DO UPDATE SET seconds = EXCLUDED.seconds, "
        "cpus = EXCLUDED.cpus, busy_fraction = EXCLUDED.busy_fraction, "
        "steal_fraction = EXCLUDED.steal_fraction, other_cpus = EXCLUDED.other_cpus, "
        "load1_before = EXCLUDED.load1_before, load1_after = EXCLUDED.load1_after, "
        "top_others = EXCLUDED.top_others",
        run_id, w.host, w.seconds, w.cpus, w.busy_fraction, w.steal_fraction, w.other_cpus,
        w.load1_before, w.load1_after, NodeCpuWindowToJson(w).at("top_others").dump());
  }
}

std::map<int64_t, std::vector<NodeCpuWindow>> ReadRunCpuWindows(
    pqxx::transaction_base& txn, const std::vector<int64_t>& run_ids) {
  std::map<int64_t, std::vector<NodeCpuWindow>> out;
  if (run_ids.empty()) return out;
  pqxx::result rows = txn.exec_params(
      "SELECT run_id, host, seconds, cpus, busy_fraction, steal_fraction, other_cpus, "
      "load1_before, load1_after, top_others::text FROM run_cpu_windows "
      "WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, host",
      PgBigintArrayLiteral(run_ids));
  for (const auto& row : rows) {
    NodeCpuWindow w;
    w.host = row[1].as<std::string>();
    w.seconds = row[2].as<double>();
    w.cpus = row[3].as<int>();
    w.busy_fraction = row[4].as<double>();
    w.steal_fraction = row[5].as<double>();
    w.other_cpus = row[6].as<double>();
    w.load1_before = row[7].as<double>();
    w.load1_after = row[8].as<double>();
    nlohmann::json top = nlohmann::json::parse(row[9].as<std::string>(), nullptr, false);
    if (top.is_array()) {
      for (const nlohmann::json& p : top) {
        if (p.is_object() && p.value("comm", nlohmann::json()).is_string()) {
          w.top_others.push_back({p["comm"].get<std::string>(), p.value("cpu_seconds", 0.0)});
        }
      }
    }
    out[row[0].as<int64_t>()].push_back(std::move(w));
  }
  return out;
}

}  // namespace fabtrack::store
