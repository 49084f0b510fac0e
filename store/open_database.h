// Opens the database a command is configured for: --db, FABTRACK_DB, libpq's
// PG* variables, or the embedded server (started on demand, and said so).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <pqxx/connection>
#include <stdexcept>
#include <string>

#include "core/database_choice.h"
#include "store/embedded_postgres.h"
#include "store/spool_target.h"

namespace fabtrack::store {

using fabtrack::DatabaseChoice;

enum class SchemaPolicy {
  kRequireCurrent,  // writers and readers: refuse an old or too-new schema
  kNone,            // `db migrate` / `db status`: look at it themselves
};

// Whether a database failure passes by itself (server down, restarting,
// unreachable, not answering: wait it out, spool) or needs someone to fix
// the configuration (credentials, database name, privileges, schema
// version: say so, and fail the command).
enum class FailureKind { kOutage, kMisconfiguration };

// Classifies libpq's and fabtrack's failure messages. Pure.
FailureKind ClassifyDatabaseFailure(const std::string& message);

// The database could not be used; what() says why, without secrets.
class DatabaseUnavailable : public std::runtime_error {
 public:
  explicit DatabaseUnavailable(const std::string& what)
      : std::runtime_error(what), kind_(ClassifyDatabaseFailure(what)) {}
  DatabaseUnavailable(const std::string& what, FailureKind kind)
      : std::runtime_error(what), kind_(kind) {}
  FailureKind kind() const { return kind_; }

 private:
  FailureKind kind_;
};

// The conninfo the database choice resolves to (--db, FABTRACK_DB) is one
// libpq cannot parse: a typo to fix, never an outage to spool through.
// what() names where it came from, redacted, and libpq's reason.
class UnparsableConninfo : public std::invalid_argument {
 public:
  using std::invalid_argument::invalid_argument;
};

// The database `choice` names, for binding spooled batches to it (no
// connection made; the embedded server's address without starting it).
SpoolTarget TargetOf(const DatabaseChoice& choice);

EmbeddedOptions EmbeddedOptionsFor(const DatabaseChoice& choice);

// Human description of where the connection goes, without secrets.
std::string DescribeTarget(const DatabaseChoice& choice);

// Opens the configured database. For the embedded default, starts the server
// if needed and migrates it (fabtrack owns that database); notices (server
// started, password in a conninfo) go to `notices`. Throws
// UnparsableConninfo before any connection attempt, DatabaseUnavailable when
// the database cannot be used.
std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseChoice& choice, SchemaPolicy policy,
                                               std::ostream& notices);

}  // namespace fabtrack::store
