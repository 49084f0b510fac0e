#include "cli/database_access.h"

#include "cli/commands.h"

namespace fabtrack::cli {

void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options) {
  app->add_option("--db", options->db,
                  "libpq connection string or URI (else FABTRACK_DB, PG* variables, or the "
                  "embedded database). Keep passwords in ~/.pgpass, not here.");
  app->add_option("--data-dir", options->data_dir,
                  "embedded PostgreSQL directory (default $FABTRACK_DATA_DIR, "
                  "$XDG_DATA_HOME/fabtrack/postgres, /var/lib/fabtrack/postgres as root)");
}

void ReplaySpool(pqxx::connection& connection, std::ostream& err) {
  store::Spool spool(store::DefaultSpoolDir());
  if (spool.Pending().empty()) return;
  store::ReplayResult r = store::ReplaySpool(spool, connection, err);
  err << "fabtrack: replayed " << r.replayed << " spooled batch(es) from " << spool.dir();
  if (r.corrupt) err << ", " << r.corrupt << " set aside in " << spool.dir() << "/corrupt";
  if (r.remaining) err << ", " << r.remaining << " still spooled";
  err << "\n";
}

std::unique_ptr<pqxx::connection> OpenDatabaseOrSpool(const DatabaseOptions& options,
                                                      SchemaPolicy policy, std::ostream& err) {
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = store::OpenDatabase(options, policy, err);
  } catch (const store::DatabaseUnavailable& e) {
    err << "fabtrack: " << e.what() << "\n";
    return nullptr;
  }
  // Replay only into a schema known to be current (`db migrate` and `db
  // status` open an old one on purpose).
  if (policy != SchemaPolicy::kRequireCurrent) return connection;
  try {
    ReplaySpool(*connection, err);
  } catch (const std::exception& e) {
    // The spool stays for the next command; this one goes on.
    err << "fabtrack: spool replay stopped: " << e.what() << "\n";
  }
  return connection;
}

std::unique_ptr<pqxx::connection> OpenDatabaseOrExit(const DatabaseOptions& options,
                                                     SchemaPolicy policy, std::ostream& err) {
  std::unique_ptr<pqxx::connection> connection = OpenDatabaseOrSpool(options, policy, err);
  if (!connection) throw CommandExit{kExitDatabaseError};
  return connection;
}

void SpoolOrExit(const store::SpoolBatch& batch, std::ostream& err) {
  store::Spool spool(store::DefaultSpoolDir());
  try {
    std::string path = spool.Put(batch);
    err << "fabtrack: spooled to " << path
        << " (stored by the next fabtrack command that reaches the database, or `fabtrack "
           "spool replay`)\n";
  } catch (const store::SpoolError& e) {
    err << "fabtrack: could neither store nor spool: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

}  // namespace fabtrack::cli
