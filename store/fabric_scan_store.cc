#include "store/fabric_scan_store.h"

#include <pqxx/pqxx>

#include "core/fabric_scan_json.h"
#include "store/port_writer.h"
#include "store/run_writer.h"
#include "store/snapshot_deltas.h"

namespace fabtrack::store {

std::optional<FabricScan> ReadPreviousFabricScan(pqxx::transaction_base& txn,
                                                 const std::string& cluster, std::string* why) {
  pqxx::result rows = txn.exec_params(
      "SELECT id, scan::text FROM fabric_scans WHERE cluster = $1 "
      "ORDER BY scanned_at DESC, id DESC LIMIT 1",
      cluster);
  if (rows.empty()) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(rows[0][1].as<std::string>(), nullptr, false);
  std::string reason;
  std::optional<FabricScan> scan = FabricScanFromJson(doc, &reason);
  if (!scan && why) *why = "fabric_scans row " + rows[0][0].as<std::string>() + ": " + reason;
  return scan;
}

StoredFabricScan WriteFabricScan(pqxx::transaction_base& txn, const std::string& cluster,
                                 const FabricScan& scan, const std::string& findings_json) {
  EnsureCluster(txn, cluster);
  StoredFabricScan out;
  // Once: a spooled scan replayed twice (a crash between the commit and the
  // batch's removal) is the same source at the same instant.
  pqxx::result same = txn.exec_params(
      "SELECT id FROM fabric_scans WHERE cluster = $1 AND scanned_at = $2::timestamptz AND "
      "source = $3",
      cluster, scan.scanned_at, scan.source);
  if (!same.empty()) {
    out.id = same[0][0].as<int64_t>();
    return out;
  }
  out.id = txn.exec_params1(
                  "INSERT INTO fabric_scans (cluster, scanned_at, source, nodes, links, "
                  "unanswered, scan, findings) VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, "
                  "$8::jsonb) RETURNING id",
                  cluster, scan.scanned_at, scan.source, static_cast<int>(scan.nodes.size()),
                  static_cast<int>(scan.links.size()), static_cast<int>(scan.unanswered.size()),
                  FabricScanToJson(scan).dump(), findings_json)[0]
               .as<int64_t>();
  for (const HostPorts& host : FabricSwitchPorts(scan)) {
    out.port_samples +=
        WriteHostSample(txn, cluster, host, scan.scanned_at, std::nullopt, "snapshot");
    out.windows += WriteSnapshotPortDeltas(txn, cluster, host, scan.scanned_at);
  }
  return out;
}

}  // namespace fabtrack::store
