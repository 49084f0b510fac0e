// `fabtrack ack`'s silences (schema/012_problem_acks.sql): written once,
// read by every analysis of the cluster. SQL parameterized.
#pragma once

#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/problem.h"

namespace fabtrack::store {

// The problem id names no finding of the cluster, ever.
class UnknownProblem : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Records an ack of `problem` (a findings.fingerprint of `cluster`) until
// `until` (RFC 3339, in the future). Throws UnknownProblem, or pqxx errors.
void AddProblemAck(pqxx::connection_base& connection, const std::string& cluster,
                   const std::string& problem, const std::string& until, const std::string& note);

// The acks in force now: the newest unexpired one per problem.
std::vector<ProblemAck> ProblemAcksInForce(pqxx::connection_base& connection,
                                           const std::string& cluster);

}  // namespace fabtrack::store
