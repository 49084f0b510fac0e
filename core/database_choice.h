// Which database a command uses, as the operator named it: the flags every
// database command takes. Resolved to a connection by store/open_database
// (FABTRACK_DB, libpq's PG* variables, or the embedded server when unset).
#pragma once

#include <optional>
#include <string>

namespace fabtrack {

struct DatabaseChoice {
  std::optional<std::string> db;        // --db
  std::optional<std::string> data_dir;  // embedded server root (--data-dir)
};

}  // namespace fabtrack
