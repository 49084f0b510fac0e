// fabtrack db start|stop|status|migrate
#include <iostream>

#include "app/database_admin.h"
#include "cli/commands.h"
#include "cli/database_options.h"

namespace fabtrack::cli {
namespace {

void RunStart(const DatabaseOptions& o) {
  app::EmbeddedStart r = app::StartEmbedded(o, std::cerr);
  std::cout << (r.initialized ? "initialized and " : "")
            << (r.started ? "started" : "already running") << ": embedded PostgreSQL in " << r.root
            << "\n"
            << "schema version " << r.schema.to_version
            << (r.schema.applied.empty()
                    ? ""
                    : " (applied " + std::to_string(r.schema.applied.size()) + ")")
            << "\n"
            << "connect with: psql \"" << r.conninfo << "\"\n";
}

void RunStop(const DatabaseOptions& o) {
  bool stopped = app::StopEmbedded(o, std::cerr);
  std::cout << (stopped ? "stopped" : "not running") << ": embedded PostgreSQL in "
            << app::InspectEmbedded(o).root << "\n";
}

void RunStatus(const DatabaseOptions& o) {
  app::EmbeddedState server = app::InspectEmbedded(o);
  std::cout << "embedded: " << server.root << " "
            << (!server.initialized ? "not initialized"
                : server.running    ? "running"
                                    : "stopped")
            << "\n";
  if (server.running) std::cout << "  conninfo: " << server.conninfo << "\n";
  std::cout << "target: " << app::DescribeTarget(o) << "\n";
  // Report the configured database's schema without starting anything.
  if (server.targets_embedded && !server.running) throw CommandExit{kExitDatabaseError};
  app::SchemaState schema = app::ReadSchemaState(o, std::cerr);
  std::cout << "schema: version " << schema.have << " (this fabtrack: " << schema.want << ")"
            << (schema.have == schema.want  ? ""
                : schema.have < schema.want ? " — run `fabtrack db migrate`"
                                            : " — NEWER than this fabtrack")
            << "\n";
  if (schema.have != schema.want) throw CommandExit{kExitDatabaseError};
}

void RunMigrate(const DatabaseOptions& o) {
  app::MigrationReport r = app::MigrateSchema(o, std::cerr);
  if (r.applied.empty()) {
    std::cout << "schema is current (version " << r.to_version << "); nothing to do\n";
  }
  for (const auto& name : r.applied) std::cout << "applied " << name << "\n";
  if (!r.applied.empty()) {
    std::cout << "schema version " << r.from_version << " -> " << r.to_version << "\n";
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
