// How commands reach PostgreSQL: the --db/--data-dir flags and a wrapper
// around store::OpenDatabase that turns failures into exit code 3.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <pqxx/connection>

#include "store/open_database.h"

namespace fabtrack::cli {

using DatabaseOptions = store::DatabaseChoice;
using store::DescribeTarget;
using store::EmbeddedOptionsFor;
using store::SchemaPolicy;

// Adds --db (and --data-dir for the embedded server) to a subcommand.
void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options);

// store::OpenDatabase; prints the reason and throws CommandExit{kExitDatabaseError}
// when the database cannot be used.
std::unique_ptr<pqxx::connection> OpenDatabaseOrExit(const DatabaseOptions& options,
                                                     SchemaPolicy policy, std::ostream& err);

}  // namespace fabtrack::cli
