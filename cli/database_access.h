// How commands reach PostgreSQL: --db, FABTRACK_DB, PG* variables, or the
// embedded default (started on demand, and said so on stderr).
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <ostream>
#include <pqxx/connection>
#include <string>

#include "store/embedded_postgres.h"

namespace fabtrack::cli {

struct DatabaseOptions {
  std::optional<std::string> db;
  std::optional<std::string> data_dir;  // embedded server root (--data-dir)
};

// Adds --db (and --data-dir for the embedded server) to a subcommand.
void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options);

enum class SchemaPolicy {
  kRequireCurrent,  // writers and readers: refuse an old or too-new schema
  kNone,            // `db migrate` / `db status`: look at it themselves
};

// Opens the configured database. For the embedded default, starts the server
// if needed and migrates it (fabtrack owns that database). Throws CommandExit
// with kExitDatabaseError after printing a clear message.
std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseOptions& options, SchemaPolicy policy,
                                               std::ostream& err);

// The embedded server's settings: environment defaults, --data-dir on top.
store::EmbeddedOptions EmbeddedOptionsFor(const DatabaseOptions& options);

// Human description of where the connection goes, without secrets.
std::string DescribeTarget(const DatabaseOptions& options);

}  // namespace fabtrack::cli
