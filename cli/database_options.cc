#include "cli/database_options.h"

namespace fabtrack::cli {

void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options) {
  app->add_option("--db", options->db,
                  "libpq connection string or URI (else FABTRACK_DB, PG* variables, or the "
                  "embedded database). Keep passwords in ~/.pgpass, not here.");
  app->add_option("--data-dir", options->data_dir,
                  "embedded PostgreSQL directory (default $FABTRACK_DATA_DIR, "
                  "$XDG_DATA_HOME/fabtrack/postgres, /var/lib/fabtrack/postgres as root)");
}

}  // namespace fabtrack::cli
