#include "app/analysis_session.h"

#include <pqxx/pqxx>

#include "app/database_access.h"
#include "store/analysis_reader.h"
#include "store/findings_writer.h"
#include "store/problem_acks.h"

namespace fabtrack::app {

struct AnalysisSession::Connection {
  std::unique_ptr<pqxx::connection> db;
};

AnalysisSession::AnalysisSession(const DatabaseChoice& choice, std::ostream& err)
    : connection_(std::make_unique<Connection>()) {
  connection_->db = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  LimitReadTime(*connection_->db);
}

AnalysisSession::~AnalysisSession() = default;

namespace {

// Runs a read, turning the database's failures into the operator's words.
template <typename Read>
auto Reading(Read read) -> decltype(read()) {
  try {
    return read();
  } catch (const store::UnknownCluster& e) {
    throw AnalysisUnavailable(e.what());
  } catch (const pqxx::data_exception& e) {
    throw AnalysisUnavailable(std::string("bad --since: ") + e.what());
  } catch (const pqxx::broken_connection& e) {
    throw AnalysisUnavailable(std::string("database connection lost: ") + e.what());
  } catch (const pqxx::sql_error& e) {
    throw AnalysisUnavailable(std::string("database error: ") + e.what());
  }
}

}  // namespace

std::vector<std::string> AnalysisSession::ClustersToAnalyze() {
  return Reading([&] { return store::ClustersToAnalyze(*connection_->db); });
}

AnalysisInput AnalysisSession::Load(
    const std::string& cluster, const std::optional<std::string>& since,
    std::function<std::vector<int64_t>(const AnalysisInput&)> summarized_results) {
  return Reading([&] {
    return store::LoadAnalysisInput(*connection_->db,
                                    {cluster, since, std::move(summarized_results)});
  });
}

void AnalysisSession::StoreSummaries(const AnalysisInput& input, const RunFigures& produced) {
  try {
    store::StoreRunSummaries(*connection_->db, input, produced);
  } catch (const pqxx::failure& e) {
    throw AnalysisUnavailable(std::string("could not store the history summaries: ") + e.what());
  }
}

StoredAnalysis AnalysisSession::Store(const AnalysisInput& input, const AnalysisResult& result) {
  try {
    store::StoredFindings s = store::StoreAnalysis(*connection_->db, input, result);
    return {s.opened, s.refreshed, s.resolved, s.analysis_id};
  } catch (const pqxx::failure& e) {
    throw AnalysisUnavailable(std::string("could not store the findings: ") + e.what());
  }
}

std::vector<ProblemHistory> AnalysisSession::History(const std::string& cluster) {
  return Reading([&] { return store::OpenFindingHistory(*connection_->db, cluster); });
}

std::vector<ProblemAck> AnalysisSession::Acks(const std::string& cluster) {
  return Reading([&] { return store::ProblemAcksInForce(*connection_->db, cluster); });
}

void AnalysisSession::Ack(const std::string& cluster, const std::string& problem,
                          const std::string& until, const std::string& note) {
  try {
    Reading([&] {
      store::AddProblemAck(*connection_->db, cluster, problem, until, note);
      return 0;
    });
  } catch (const store::UnknownProblem& e) {
    throw UnknownProblem(e.what());
  }
}

}  // namespace fabtrack::app
