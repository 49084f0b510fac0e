// Numbered schema migrations (schema/NNN_name.sql, embedded at build time),
// applied in order, each in its own transaction, recorded in
// fabtrack_schema_migrations with a checksum.
#pragma once

#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <vector>

namespace fabtrack::store {

struct Migration {
  int version;
  const char* name;
  const char* sql;
};

// Compiled into the binary from schema/.
const std::vector<Migration>& EmbeddedMigrations();

// The database is at a schema this binary does not know (newer), or a
// recorded migration's checksum differs from the embedded one.
class SchemaMismatch : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct MigrateResult {
  int from_version = 0;
  int to_version = 0;
  std::vector<std::string> applied;  // "001_initial", ...
};

// Applies the missing migrations. Serialised with an advisory lock so two
// collectors starting at once do not race. Throws SchemaMismatch when the
// database is ahead of the binary.
MigrateResult Migrate(pqxx::connection_base& connection,
                      const std::vector<Migration>& migrations = EmbeddedMigrations());

// Current schema version (0 for an empty database).
int SchemaVersion(pqxx::connection_base& connection);

// Throws SchemaMismatch unless the database is exactly at the binary's
// version, with a message telling the user what to run.
void RequireCurrentSchema(pqxx::connection_base& connection,
                          const std::vector<Migration>& migrations = EmbeddedMigrations());

}  // namespace fabtrack::store
