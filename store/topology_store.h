// Nodes' GPU/NIC wiring (core/node_topology.h) in node_topologies
// (schema/010): written by `fabtrack topology ingest`, read for the fleet
// diff.
#pragma once

#include <map>
#include <pqxx/connection>
#include <pqxx/transaction_base>
#include <string>

#include "core/node_topology.h"

namespace fabtrack::store {

// Stores `topology` as `host`'s newest in `cluster`, unless the host's newest
// stored one has the same fingerprint: then writes nothing and returns false.
bool WriteNodeTopology(pqxx::transaction_base& txn, const std::string& cluster,
                       const std::string& host, const std::string& format,
                       const NodeTopology& topology, const std::string& source_path);

// The newest topology of every host of `cluster`. A row whose document cannot
// be read (edited by hand) is left out.
std::map<std::string, NodeTopology> ReadFleetTopologies(pqxx::transaction_base& txn,
                                                        const std::string& cluster);

}  // namespace fabtrack::store
