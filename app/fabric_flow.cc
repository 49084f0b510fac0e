#include "app/fabric_flow.h"

#include <pqxx/pqxx>

#include "analyzer/report/json_report.h"
#include "app/batch_store.h"
#include "app/database_access.h"
#include "core/exit_code.h"
#include "store/fabric_scan_store.h"

namespace fabtrack::app {

FabricScanResult ScanFabric(const FabricScanRequest& request, std::ostream& err) {
  // The database first: a scan of a large fabric is not thrown away for a
  // wrong --db (a misconfiguration is said before the scan). While it is
  // away (an outage) the scan is judged alone and spooled, stored by the
  // next command that reaches the database.
  std::optional<BatchStore> database;
  if (request.cluster) {
    database.emplace(request.database, err);
    database->ExitIfMisconfigured();
  }
  fabric::ScanOutcome outcome = fabric::ScanSubnet(request.settings);
  if (!outcome.scan) {
    err << "fabtrack fabric scan: " << outcome.error << "\n";
    throw CommandExit{kExitInputError};
  }
  FabricScanResult result;
  result.scan = std::move(*outcome.scan);
  if (!request.cluster) {
    result.findings = fabric_analysis::JudgeFabric(nullptr, result.scan, request.thresholds);
    return result;
  }
  std::optional<FabricScan> previous;
  database->Read([&](pqxx::transaction_base& txn) {
    std::string why;
    previous = store::ReadPreviousFabricScan(txn, *request.cluster, &why);
    if (!why.empty()) err << "fabtrack fabric scan: note: judged alone: " << why << "\n";
  });
  if (previous) result.previous_scanned_at = previous->scanned_at;
  result.findings = fabric_analysis::JudgeFabric(previous ? &*previous : nullptr, result.scan,
                                                 request.thresholds);
  nlohmann::json findings = nlohmann::json::array();
  for (const Finding& f : result.findings) findings.push_back(analyzer::FindingJson(f));
  std::vector<store::SpoolBatch> batches(1);
  batches[0].kind = store::SpoolBatch::Kind::kFabricScan;
  batches[0].cluster = *request.cluster;
  batches[0].fabric_scan = result.scan;
  batches[0].fabric_findings = findings.dump();
  try {
    StoreOutcome stored = database->Store(std::move(batches));
    if (stored.stored) {
      result.stored_id = stored.applied.front().fabric_scan_id;
      result.port_samples = stored.applied.front().fabric_port_samples;
    } else {
      result.spooled = true;
    }
  } catch (const BatchRefused& e) {
    err << "fabtrack fabric scan: the database refused it: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  // An outage: one warning line (spooled, where); a misconfiguration met
  // after the scan: exit 3, the scan kept in the spool.
  database->Finish();
  return result;
}

}  // namespace fabtrack::app
