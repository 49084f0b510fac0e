// Loads what the analyzer judges from PostgreSQL into its plain model: every
// run of a cluster with its per-size results (the history), and for the runs
// judged, their channel, NIC and port evidence.
#pragma once

#include <optional>
#include <pqxx/connection>
#include <stdexcept>
#include <string>

#include "core/analysis_input.h"

namespace fabtrack::store {

class UnknownCluster : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct AnalysisQuery {
  std::string cluster;
  // Judge runs started at or after this ISO 8601 time; unset: the newest
  // night (from 12:00 UTC before the newest run, see analyzer NightOf).
  std::optional<std::string> since;
};

// Throws UnknownCluster when the cluster has never been recorded.
AnalysisInput LoadAnalysisInput(pqxx::connection_base& connection, const AnalysisQuery& query);

// The clusters that have runs or windows between imported snapshots, for
// `fabtrack analyze` without --cluster.
std::vector<std::string> ClustersToAnalyze(pqxx::connection_base& connection);

}  // namespace fabtrack::store
