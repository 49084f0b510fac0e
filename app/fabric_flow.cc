#include "app/fabric_flow.h"

#include <pqxx/pqxx>

#include "analyzer/report/json_report.h"
#include "app/database_access.h"
#include "core/exit_code.h"
#include "store/fabric_scan_store.h"

namespace fabtrack::app {

FabricScanResult ScanFabric(const FabricScanRequest& request, std::ostream& err) {
  // The database first: a scan of a large fabric is not thrown away for a
  // wrong --db.
  std::unique_ptr<pqxx::connection> connection;
  if (request.cluster) {
    connection = OpenDatabaseOrExit(request.database, SchemaPolicy::kRequireCurrent, err);
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
  try {
    pqxx::work txn(*connection);
    std::string why;
    std::optional<FabricScan> previous = store::ReadPreviousFabricScan(txn, *request.cluster, &why);
    if (!why.empty()) err << "fabtrack fabric scan: note: judged alone: " << why << "\n";
    if (previous) result.previous_scanned_at = previous->scanned_at;
    result.findings = fabric_analysis::JudgeFabric(previous ? &*previous : nullptr, result.scan,
                                                   request.thresholds);
    nlohmann::json findings = nlohmann::json::array();
    for (const Finding& f : result.findings) findings.push_back(analyzer::FindingJson(f));
    store::StoredFabricScan stored =
        store::WriteFabricScan(txn, *request.cluster, result.scan, findings.dump());
    txn.commit();
    result.stored_id = stored.id;
    result.port_samples = stored.port_samples;
  } catch (const pqxx::sql_error& e) {
    err << "fabtrack fabric scan: the database refused it: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return result;
}

}  // namespace fabtrack::app
