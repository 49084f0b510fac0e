#include "store/topology_store.h"

#include <pqxx/pqxx>

#include "core/node_topology_json.h"
#include "store/run_writer.h"

namespace fabtrack::store {

bool WriteNodeTopology(pqxx::transaction_base& txn, const std::string& cluster,
                       const std::string& host, const std::string& format,
                       const NodeTopology& topology, const std::string& source_path) {
  EnsureCluster(txn, cluster);
  const std::string fingerprint = TopologyFingerprint(topology);
  pqxx::result newest = txn.exec_params(
      "SELECT fingerprint FROM node_topologies WHERE cluster = $1 AND host = $2 "
      "ORDER BY recorded_at DESC, id DESC LIMIT 1",
      cluster, host);
  if (!newest.empty() && newest[0][0].as<std::string>() == fingerprint) return false;
  txn.exec_params0(
      "INSERT INTO node_topologies (cluster, host, format, fingerprint, topology, source_path) "
      "VALUES ($1, $2, $3, $4, $5::jsonb, $6)",
      cluster, host, format, fingerprint, NodeTopologyToJson(topology).dump(), source_path);
  return true;
}

std::map<std::string, NodeTopology> ReadFleetTopologies(pqxx::transaction_base& txn,
                                                        const std::string& cluster) {
  std::map<std::string, NodeTopology> out;
  pqxx::result rows = txn.exec_params(
      "SELECT DISTINCT ON (host) host, topology::text FROM node_topologies WHERE cluster = $1 "
      "ORDER BY host, recorded_at DESC, id DESC",
      cluster);
  for (const pqxx::row& r : rows) {
    std::string why;
    std::optional<NodeTopology> t =
        NodeTopologyFromJson(nlohmann::json::parse(r[1].as<std::string>(), nullptr, false), &why);
    if (t) out.emplace(r[0].as<std::string>(), std::move(*t));
  }
  return out;
}

}  // namespace fabtrack::store
