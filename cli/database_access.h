// How commands reach PostgreSQL: the --db/--data-dir flags and a wrapper
// around store::OpenDatabase that turns failures into exit code 3.
#pragma once

#include <CLI/CLI.hpp>
#include <memory>
#include <ostream>
#include <pqxx/connection>

#include "store/open_database.h"
#include "store/spool.h"

namespace fabtrack::cli {

using DatabaseOptions = store::DatabaseChoice;
using store::DescribeTarget;
using store::EmbeddedOptionsFor;
using store::SchemaPolicy;

// Adds --db (and --data-dir for the embedded server) to a subcommand.
void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options);

// store::OpenDatabase; prints the reason and throws CommandExit{kExitDatabaseError}
// when the database cannot be used. Before anything else it replays what
// earlier commands spooled while the database was away.
std::unique_ptr<pqxx::connection> OpenDatabaseOrExit(const DatabaseOptions& options,
                                                     SchemaPolicy policy, std::ostream& err);

// For commands that spool: as above, but nullptr (the reason printed) when
// the database cannot be used, so the caller spools its batches instead.
std::unique_ptr<pqxx::connection> OpenDatabaseOrSpool(const DatabaseOptions& options,
                                                      SchemaPolicy policy, std::ostream& err);

// Durably spools a batch the database could not take and says so; throws
// CommandExit{kExitDatabaseError} when even that fails (nothing was kept).
void SpoolOrExit(const store::SpoolBatch& batch, std::ostream& err);

// Replays the spool on an open connection (quietly when it is empty).
void ReplaySpool(pqxx::connection& connection, std::ostream& err);

}  // namespace fabtrack::cli
