// `fabtrack fabric scan`: read the subnet (collector/fabric), judge the
// window since the cluster's previous stored scan (analyzer/fabric), store
// this one (store/fabric_scan_store). Without a cluster the scan is judged
// alone (what did not answer, links below their tier's rate).
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "analyzer/fabric/fabric_window.h"
#include "collector/fabric/subnet_scan.h"
#include "core/database_choice.h"
#include "core/fabric_scan.h"
#include "core/finding.h"

namespace fabtrack::app {

struct FabricScanRequest {
  fabric::ScanSettings settings;
  fabric_analysis::FabricThresholds thresholds;
  std::optional<std::string> cluster;  // store, and judge against its previous scan
  DatabaseChoice database;
};

struct FabricScanResult {
  FabricScan scan;
  std::optional<std::string> previous_scanned_at;  // the window's start, when judged as one
  std::vector<Finding> findings;
  std::optional<int64_t> stored_id;
  size_t port_samples = 0;
  bool spooled = false;  // the database was away: judged alone, kept in the spool
};

// The scan that could not be made prints why to `err` and throws
// CommandExit{kExitInputError}; a misconfigured database (said before the
// scan), CommandExit{kExitDatabaseError}. A database outage is not one: the
// scan is judged alone and spooled (stored_id unset).
FabricScanResult ScanFabric(const FabricScanRequest& request, std::ostream& err);

}  // namespace fabtrack::app
