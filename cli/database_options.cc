#include "cli/database_options.h"

#include "store/conninfo.h"

namespace fabtrack::cli {

void AddDatabaseOptions(CLI::App* app, DatabaseOptions* options) {
  app->add_option("--db", options->db,
                  "libpq connection string or URI (else FABTRACK_DB, PG* variables, or the "
                  "embedded database). Keep passwords in ~/.pgpass, not here.")
      // A conninfo libpq cannot parse is a typo, not an outage: refused
      // here, before any connection attempt, so nothing is spooled for a
      // target nobody can name again. Shown redacted.
      ->check(CLI::Validator(
          [](const std::string& conninfo) -> std::string {
            std::optional<std::string> why = store::ConninfoParseError(conninfo);
            return why ? store::RedactConninfo(conninfo) + ": libpq cannot parse it: " + *why
                       : std::string();
          },
          "CONNINFO", "conninfo"));
  app->add_option("--data-dir", options->data_dir,
                  "embedded PostgreSQL directory (default $FABTRACK_DATA_DIR, "
                  "$XDG_DATA_HOME/fabtrack/postgres, /var/lib/fabtrack/postgres as root)");
}

}  // namespace fabtrack::cli
