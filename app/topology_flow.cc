#include "app/topology_flow.h"

#include <pqxx/pqxx>

#include "analyzer/topology/fleet_diff.h"
#include "app/database_access.h"
#include "core/exit_code.h"
#include "store/topology_store.h"

namespace fabtrack::app {

TopologyIngestResult IngestNodeTopology(const DatabaseChoice& choice, const std::string& cluster,
                                        const std::string& host, const std::string& format,
                                        const NodeTopology& topology,
                                        const std::string& source_path, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  TopologyIngestResult result;
  try {
    pqxx::work txn(*connection);
    result.stored = store::WriteNodeTopology(txn, cluster, host, format, topology, source_path);
    std::map<std::string, NodeTopology> fleet = store::ReadFleetTopologies(txn, cluster);
    txn.commit();
    result.hosts = static_cast<int>(fleet.size());
    result.fleet = DiffFleet(fleet);
  } catch (const pqxx::sql_error& e) {
    err << "fabtrack topology ingest: the database refused it: " << e.what();
    throw CommandExit{kExitDatabaseError};
  }
  return result;
}

}  // namespace fabtrack::app
