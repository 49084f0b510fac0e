// The analyzer's way to its database, for `fabtrack analyze`: reads a
// cluster's history into the analyzer's plain model and stores what the
// analysis concluded. Every failure is one AnalysisUnavailable with a
// message fit for the operator (the CLI prints it and exits 3, "could not
// analyze"); reads are bounded by FABTRACK_STATEMENT_TIMEOUT.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/analysis_input.h"
#include "core/analysis_result.h"
#include "core/database_choice.h"
#include "core/problem.h"

namespace fabtrack::app {

class AnalysisUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// `fabtrack ack` of an id that names no problem of the cluster.
class UnknownProblem : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct StoredAnalysis {
  int opened = 0, refreshed = 0, resolved = 0;
  int64_t analysis_id = 0;
};

class AnalysisSession {
 public:
  // Opens the database (replaying the spool first); throws
  // CommandExit{kExitDatabaseError} when it cannot be used (reason printed).
  AnalysisSession(const DatabaseChoice& choice, std::ostream& err);
  ~AnalysisSession();

  // The clusters that have runs or windows between imported snapshots.
  std::vector<std::string> ClustersToAnalyze();
  // The history of `cluster` and the runs to judge (from `since`, else the
  // newest night).
  // With `summarized_results` (analyzer RunsNeedingResults), on the stored
  // summarised history where it is valid (store/analysis_reader.h).
  AnalysisInput Load(
      const std::string& cluster, const std::optional<std::string>& since,
      std::function<std::vector<int64_t>(const AnalysisInput&)> summarized_results = {});
  // Keeps what the analysis derived per run as the summarised history.
  void StoreSummaries(const AnalysisInput& input, const RunFigures& produced);
  // Stores the findings (deduplicated per subject, resolved when cleared).
  StoredAnalysis Store(const AnalysisInput& input, const AnalysisResult& result);
  // The open findings earlier analyses stored for `cluster` (read before
  // Store): what tells a problem's first night and state beyond the window.
  std::vector<ProblemHistory> History(const std::string& cluster);
  // `fabtrack ack`'s silences in force for `cluster`.
  std::vector<ProblemAck> Acks(const std::string& cluster);
  // Silences `problem` until `until` (RFC 3339). Throws UnknownProblem when
  // the cluster never had it, AnalysisUnavailable when the database fails.
  void Ack(const std::string& cluster, const std::string& problem, const std::string& until,
           const std::string& note);

 private:
  struct Connection;
  std::unique_ptr<Connection> connection_;
};

}  // namespace fabtrack::app
