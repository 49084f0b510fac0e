// The flags every database command takes: --db, and --data-dir for the
// embedded server.
#pragma once

#include <CLI/CLI.hpp>

#include "core/database_choice.h"

namespace fabtrack::cli {

using DatabaseOptions = DatabaseChoice;

// Adds --db (and --data-dir for the embedded server) to a subcommand.
void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options);

}  // namespace fabtrack::cli
