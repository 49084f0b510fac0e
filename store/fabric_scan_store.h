// Subnet scans in PostgreSQL (schema 020): the scan document, its window's
// findings, and the switch ports as port samples with their snapshot windows.
#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>

#include "core/fabric_scan.h"

namespace fabtrack::store {

// The cluster's newest stored scan, or nullopt (none, or a row that no
// longer reads as a scan: *why says which).
std::optional<FabricScan> ReadPreviousFabricScan(pqxx::transaction_base& txn,
                                                 const std::string& cluster, std::string* why);

struct StoredFabricScan {
  int64_t id = 0;
  size_t port_samples = 0, windows = 0;
};

// Stores the scan and its findings (JSON array), and every switch port as a
// snapshot sample (FabricSwitchPorts) with its window since the port's
// previous snapshot.
StoredFabricScan WriteFabricScan(pqxx::transaction_base& txn, const std::string& cluster,
                                 const FabricScan& scan, const std::string& findings_json);

}  // namespace fabtrack::store
