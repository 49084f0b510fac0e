#include "store/open_database.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "store/connection.h"
#include "store/migrations.h"

namespace fabtrack::store {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

}  // namespace

EmbeddedOptions EmbeddedOptionsFor(const DatabaseChoice& choice) {
  EmbeddedOptions e = DefaultEmbeddedOptions(Env);
  if (choice.data_dir) e.root = *choice.data_dir;
  return e;
}

std::string DescribeTarget(const DatabaseChoice& choice) {
  ConnectionTarget target = ResolveConnection(choice.db, Env);
  switch (target.origin) {
    case ConnectionOrigin::kFlag:
      return "--db " + RedactConninfo(target.conninfo);
    case ConnectionOrigin::kFabtrackEnv:
      return "FABTRACK_DB " + RedactConninfo(target.conninfo);
    case ConnectionOrigin::kLibpqEnv:
      return "libpq environment (PG* variables)";
    case ConnectionOrigin::kEmbedded:
      return "embedded PostgreSQL at " +
             EmbeddedPostgres(EmbeddedOptionsFor(choice)).options().root;
  }
  return "?";
}

std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseChoice& choice, SchemaPolicy policy,
                                               std::ostream& notices) {
  ConnectionTarget target = ResolveConnection(choice.db, Env);
  if (ConninfoHasPassword(target.conninfo)) {
    notices << "fabtrack: warning: the connection string carries a password; it is visible to "
               "other users in the process list. Use ~/.pgpass, PGPASSFILE or a service file "
               "instead.\n";
  }
  std::string conninfo = target.conninfo;
  const bool embedded = target.origin == ConnectionOrigin::kEmbedded;
  if (embedded) {
    try {
      EmbeddedPostgres server(EmbeddedOptionsFor(choice));
      EmbeddedPostgres::StartResult started = server.Start();
      if (started.started || started.initialized) {
        notices << "fabtrack: no database configured (--db, FABTRACK_DB, PG*); "
                << (started.initialized ? "created and started" : "started")
                << " the embedded PostgreSQL in " << server.options().root
                << " (stop it with `fabtrack db stop`)\n";
      }
      conninfo = server.ConnInfo();
    } catch (const std::exception& e) {
      throw DatabaseUnavailable(std::string("cannot start the embedded database: ") + e.what());
    }
  }
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = Connect(conninfo);
  } catch (const std::exception& e) {
    // libpq's message names host and port, never the password.
    throw DatabaseUnavailable("cannot connect to " + DescribeTarget(choice) + ": " + e.what());
  }
  try {
    if (embedded) {
      Migrate(*connection);
    } else if (policy == SchemaPolicy::kRequireCurrent) {
      RequireCurrentSchema(*connection);
    }
  } catch (const std::exception& e) {
    throw DatabaseUnavailable(e.what());
  }
  return connection;
}

}  // namespace fabtrack::store
