// fabtrack db start|stop|status|migrate
#include <cstdlib>
#include <iostream>
#include <pqxx/pqxx>

#include "cli/commands.h"
#include "cli/database_access.h"
#include "store/connection.h"
#include "store/embedded_postgres.h"
#include "store/migrations.h"

namespace fabtrack::cli {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

store::EmbeddedPostgres Embedded(const DatabaseOptions& o) {
  return store::EmbeddedPostgres(EmbeddedOptionsFor(o));
}

void RunStart(const DatabaseOptions& o) {
  store::EmbeddedPostgres server = Embedded(o);
  store::EmbeddedPostgres::StartResult r;
  try {
    r = server.Start();
  } catch (const std::exception& e) {
    std::cerr << "fabtrack db start: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  store::MigrateResult m;
  try {
    auto connection = store::Connect(server.ConnInfo());
    m = store::Migrate(*connection);
  } catch (const std::exception& e) {
    std::cerr << "fabtrack db start: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  std::cout << (r.initialized ? "initialized and " : "")
            << (r.started ? "started" : "already running") << ": embedded PostgreSQL in "
            << server.options().root << "\n"
            << "schema version " << m.to_version
            << (m.applied.empty() ? "" : " (applied " + std::to_string(m.applied.size()) + ")")
            << "\n"
            << "connect with: psql \"" << server.ConnInfo() << "\"\n";
}

void RunStop(const DatabaseOptions& o) {
  store::EmbeddedPostgres server = Embedded(o);
  try {
    bool stopped = server.Stop();
    std::cout << (stopped ? "stopped" : "not running") << ": embedded PostgreSQL in "
              << server.options().root << "\n";
  } catch (const std::exception& e) {
    std::cerr << "fabtrack db stop: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

void RunStatus(const DatabaseOptions& o) {
  store::EmbeddedPostgres server = Embedded(o);
  bool running = server.Running();
  std::cout << "embedded: " << server.options().root << " "
            << (!server.Initialized() ? "not initialized"
                : running             ? "running"
                                      : "stopped")
            << "\n";
  if (running) std::cout << "  conninfo: " << server.ConnInfo() << "\n";
  std::cout << "target: " << DescribeTarget(o) << "\n";
  // Report the configured database's schema without starting anything.
  bool embedded_target =
      store::ResolveConnection(o.db, Env).origin == store::ConnectionOrigin::kEmbedded;
  if (embedded_target && !running) {
    throw CommandExit{kExitDatabaseError};
  }
  auto connection = OpenDatabaseOrExit(o, SchemaPolicy::kNone, std::cerr);
  int have = store::SchemaVersion(*connection);
  int want = store::EmbeddedMigrations().back().version;
  std::cout << "schema: version " << have << " (this fabtrack: " << want << ")"
            << (have == want  ? ""
                : have < want ? " — run `fabtrack db migrate`"
                              : " — NEWER than this fabtrack")
            << "\n";
  if (have != want) throw CommandExit{kExitDatabaseError};
}

void RunMigrate(const DatabaseOptions& o) {
  auto connection = OpenDatabaseOrExit(o, SchemaPolicy::kNone, std::cerr);
  try {
    store::MigrateResult r = store::Migrate(*connection);
    if (r.applied.empty()) {
      std::cout << "schema is current (version " << r.to_version << "); nothing to do\n";
    }
    for (const auto& name : r.applied) std::cout << "applied " << name << "\n";
    if (!r.applied.empty()) {
      std::cout << "schema version " << r.from_version << " -> " << r.to_version << "\n";
    }
  } catch (const store::SchemaMismatch& e) {
    std::cerr << "fabtrack db migrate: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

}  // namespace

void SetupDb(CLI::App& app) {
  CLI::App* db = app.add_subcommand("db", "Manage the database: embedded server and migrations");
  db->require_subcommand(1);
  auto options = std::make_shared<DatabaseOptions>();

  CLI::App* start =
      db->add_subcommand("start", "Initialize (first time) and start the embedded PostgreSQL");
  start->add_option("--data-dir", options->data_dir, "embedded server directory");
  start->callback([options] { RunStart(*options); });

  CLI::App* stop = db->add_subcommand("stop", "Stop the embedded PostgreSQL");
  stop->add_option("--data-dir", options->data_dir, "embedded server directory");
  stop->callback([options] { RunStop(*options); });

  CLI::App* status =
      db->add_subcommand("status", "Show the embedded server and the schema version");
  AddDatabaseOptions(status, options.get());
  status->callback([options] { RunStatus(*options); });

  CLI::App* migrate = db->add_subcommand("migrate", "Apply missing schema migrations");
  AddDatabaseOptions(migrate, options.get());
  migrate->callback([options] { RunMigrate(*options); });
}

}  // namespace fabtrack::cli
