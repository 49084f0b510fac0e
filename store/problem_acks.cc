#include "store/problem_acks.h"

#include <pqxx/pqxx>

namespace fabtrack::store {

void AddProblemAck(pqxx::connection_base& connection, const std::string& cluster,
                   const std::string& problem, const std::string& until, const std::string& note) {
  pqxx::work txn(connection);
  // The id a person typed must be one analyze printed: a typo would silence
  // nothing, silently.
  if (txn.exec_params("SELECT 1 FROM findings WHERE cluster = $1 AND fingerprint = $2 LIMIT 1",
                      cluster, problem)
          .empty()) {
    throw UnknownProblem("cluster " + cluster + " has no problem " + problem +
                         " (the id `fabtrack analyze` prints, e.g. in [..., id 3f2a9c0d1e4b5a67])");
  }
  txn.exec_params(
      "INSERT INTO problem_acks (cluster, problem, until, note) VALUES ($1, $2, $3::timestamptz, "
      "$4)",
      cluster, problem, until, note);
  txn.commit();
}

std::vector<ProblemAck> ProblemAcksInForce(pqxx::connection_base& connection,
                                           const std::string& cluster) {
  pqxx::read_transaction txn(connection);
  pqxx::result rows = txn.exec_params(
      "SELECT DISTINCT ON (problem) problem, "
      "to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), note "
      "FROM problem_acks WHERE cluster = $1 AND until > now() ORDER BY problem, acked_at DESC",
      cluster);
  std::vector<ProblemAck> acks;
  for (const auto& row : rows) {
    acks.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>()});
  }
  return acks;
}

}  // namespace fabtrack::store
