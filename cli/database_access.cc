#include "cli/database_access.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "cli/commands.h"
#include "store/connection.h"
#include "store/embedded_postgres.h"
#include "store/migrations.h"

namespace fabtrack::cli {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

}  // namespace

store::EmbeddedOptions EmbeddedOptionsFor(const DatabaseOptions& options) {
  store::EmbeddedOptions e = store::DefaultEmbeddedOptions(Env);
  if (options.data_dir) e.root = *options.data_dir;
  return e;
}

void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options) {
  app->add_option("--db", options->db,
                  "libpq connection string or URI (else FABTRACK_DB, PG* variables, or the "
                  "embedded database). Keep passwords in ~/.pgpass, not here.");
  app->add_option("--data-dir", options->data_dir,
                  "embedded PostgreSQL directory (default $FABTRACK_DATA_DIR, "
                  "$XDG_DATA_HOME/fabtrack/postgres, /var/lib/fabtrack/postgres as root)");
}

std::string DescribeTarget(const DatabaseOptions& options) {
  store::ConnectionTarget target = store::ResolveConnection(options.db, Env);
  switch (target.origin) {
    case store::ConnectionOrigin::kFlag:
      return "--db " + store::RedactConninfo(target.conninfo);
    case store::ConnectionOrigin::kFabtrackEnv:
      return "FABTRACK_DB " + store::RedactConninfo(target.conninfo);
    case store::ConnectionOrigin::kLibpqEnv:
      return "libpq environment (PG* variables)";
    case store::ConnectionOrigin::kEmbedded:
      return "embedded PostgreSQL at " +
             store::EmbeddedPostgres(EmbeddedOptionsFor(options)).options().root;
  }
  return "?";
}

std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseOptions& options, SchemaPolicy policy,
                                               std::ostream& err) {
  store::ConnectionTarget target = store::ResolveConnection(options.db, Env);
  if (store::ConninfoHasPassword(target.conninfo)) {
    err << "fabtrack: warning: the connection string carries a password; it is visible to other "
           "users in the process list. Use ~/.pgpass, PGPASSFILE or a service file instead.\n";
  }
  std::string conninfo = target.conninfo;
  bool embedded = target.origin == store::ConnectionOrigin::kEmbedded;
  try {
    if (embedded) {
      store::EmbeddedPostgres server(EmbeddedOptionsFor(options));
      store::EmbeddedPostgres::StartResult started = server.Start();
      if (started.started || started.initialized) {
        err << "fabtrack: no database configured (--db, FABTRACK_DB, PG*); "
            << (started.initialized ? "created and started" : "started")
            << " the embedded PostgreSQL in " << server.options().root
            << " (stop it with `fabtrack db stop`)\n";
      }
      conninfo = server.ConnInfo();
    }
  } catch (const std::exception& e) {
    err << "fabtrack: cannot start the embedded database: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = store::Connect(conninfo);
  } catch (const std::exception& e) {
    err << "fabtrack: cannot connect to " << DescribeTarget(options) << ": " << e.what();
    throw CommandExit{kExitDatabaseError};
  }
  try {
    if (embedded) {
      store::Migrate(*connection);
    } else if (policy == SchemaPolicy::kRequireCurrent) {
      store::RequireCurrentSchema(*connection);
    }
  } catch (const store::SchemaMismatch& e) {
    err << "fabtrack: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  } catch (const std::exception& e) {
    err << "fabtrack: database error: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return connection;
}

}  // namespace fabtrack::cli
