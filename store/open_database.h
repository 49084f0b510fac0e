// Opens the database a command is configured for: --db, FABTRACK_DB, libpq's
// PG* variables, or the embedded server (started on demand, and said so).
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <pqxx/connection>
#include <stdexcept>
#include <string>

#include "store/embedded_postgres.h"

namespace fabtrack::store {

struct DatabaseChoice {
  std::optional<std::string> db;        // --db
  std::optional<std::string> data_dir;  // embedded server root (--data-dir)
};

enum class SchemaPolicy {
  kRequireCurrent,  // writers and readers: refuse an old or too-new schema
  kNone,            // `db migrate` / `db status`: look at it themselves
};

// The database could not be used; what() says why, without secrets.
class DatabaseUnavailable : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

EmbeddedOptions EmbeddedOptionsFor(const DatabaseChoice& choice);

// Human description of where the connection goes, without secrets.
std::string DescribeTarget(const DatabaseChoice& choice);

// Opens the configured database. For the embedded default, starts the server
// if needed and migrates it (fabtrack owns that database); notices (server
// started, password in a conninfo) go to `notices`.
std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseChoice& choice, SchemaPolicy policy,
                                               std::ostream& notices);

}  // namespace fabtrack::store
