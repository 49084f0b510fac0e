// The fabtrack binary under test (FABTRACK_CLI, set per test target) run
// against a test database: `fabtrack ARGS --db CONNINFO`.
#pragma once

#include <string>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack::testing {

inline CommandOutput Fabtrack(const std::string& args, const TestDatabase& db) {
  return RunCommand(std::string(FABTRACK_CLI) + " " + args + " --db '" + db.conninfo() + "'");
}

}  // namespace fabtrack::testing
