#include "store/run_fabric_window_store.h"

#include <pqxx/pqxx>

#include "store/copy_row.h"

namespace fabtrack::store {

void WriteRunFabricWindow(pqxx::transaction_base& txn, int64_t run_id,
                          const RunFabricWindow& window) {
  const std::string deltas = FabricLinkDeltasToJson(RunFabricLinkDeltas(window)).dump();
  nlohmann::json doc = RunFabricWindowToJson(window);
  doc["link_deltas"] = nlohmann::json::parse(deltas);
  txn.exec_params(
      "INSERT INTO run_fabric_windows (run_id, scanned_before, scanned_after, links, "
      "unmapped_hosts, fabric_window) VALUES ($1, $2::timestamptz, $3::timestamptz, $4, "
      "$5::text[], $6::jsonb) "
      "ON CONFLICT (run_id) DO UPDATE SET scanned_before = EXCLUDED.scanned_before, "
      "scanned_after = EXCLUDED.scanned_after, links = EXCLUDED.links, "
      "unmapped_hosts = EXCLUDED.unmapped_hosts, fabric_window = EXCLUDED.fabric_window",
      run_id, window.before.scanned_at, window.after.scanned_at,
      static_cast<int>(window.after.links.size()), PgTextArrayLiteral(window.unmapped_hosts),
      doc.dump());
}

std::map<int64_t, RunFabricWindow> ReadRunFabricWindows(pqxx::transaction_base& txn,
                                                        const std::vector<int64_t>& run_ids,
                                                        std::vector<std::string>* problems) {
  std::map<int64_t, RunFabricWindow> out;
  if (run_ids.empty()) return out;
  pqxx::result rows = txn.exec_params(
      "SELECT run_id, fabric_window::text FROM run_fabric_windows "
      "WHERE run_id = ANY($1::bigint[]) ORDER BY run_id",
      PgBigintArrayLiteral(run_ids));
  for (const auto& row : rows) {
    const int64_t run_id = row[0].as<int64_t>();
    nlohmann::json doc = nlohmann::json::parse(row[1].as<std::string>(), nullptr, false);
    std::string why = "not JSON";
    std::optional<RunFabricWindow> window =
        doc.is_discarded() ? std::nullopt : RunFabricWindowFromJson(doc, &why);
    if (!window) {
      if (problems) {
        problems->push_back("run_fabric_windows row of run " + std::to_string(run_id) + ": " + why);
      }
      continue;
    }
    out[run_id] = std::move(*window);
  }
  return out;
}

}  // namespace fabtrack::store
