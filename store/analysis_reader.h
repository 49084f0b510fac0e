// Loads what the analyzer judges from PostgreSQL into its plain model: every
// run of a cluster with its per-size results (the history), and for the runs
// judged, their channel, NIC and port evidence.
#pragma once

#include <functional>
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
  // Summarised history (schema 015): when set and the stored summaries are
  // valid for the runs now stored (same runs up to the newest one they saw),
  // the runs older than both that point and judge_from are marked summarized
  // with their stored figures, and only the runs this returns (given the
  // runs so marked: analyzer RunsNeedingResults) have their result rows read.
  std::function<std::vector<int64_t>(const AnalysisInput&)> summarized_results;
};

// Throws UnknownCluster when the cluster has never been recorded.
AnalysisInput LoadAnalysisInput(pqxx::connection_base& connection, const AnalysisQuery& query);

// Stores what `input`'s analysis derived per run (InputIndex::produced) as
// the cluster's summarised history, valid for input.runs: merged into the
// stored figures when the analysis ran on them (input.summaries not empty),
// else replacing them.
void StoreRunSummaries(pqxx::connection_base& connection, const AnalysisInput& input,
                       const RunFigures& produced);

// The clusters that have runs or windows between imported snapshots, for
// `fabtrack analyze` without --cluster.
std::vector<std::string> ClustersToAnalyze(pqxx::connection_base& connection);

}  // namespace fabtrack::store
