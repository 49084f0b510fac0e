#include "tests/support/test_database.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <random>
#include <stdexcept>

#include "store/migrations.h"

namespace fabtrack::testing {
namespace {

// Made and migrated by tests/support/pg_fixture.sh when the server starts.
constexpr const char* kMigratedTemplate = "fabtrack_migrated_template";

}  // namespace

std::string BaseConninfo() {
  const char* base = std::getenv("FABTRACK_TEST_DB");
  if (base == nullptr || *base == '\0') {
    throw std::runtime_error(
        "FABTRACK_TEST_DB is not set: run the DB tests through ctest, which starts the private "
        "PostgreSQL (fixture 'postgres')");
  }
  return base;
}

TestDatabase::TestDatabase(bool migrate) : base_conninfo_(BaseConninfo()) {
  std::random_device rd;
  name_ = "fabtrack_test_" + std::to_string(rd()) + std::to_string(rd() % 100000);
  bool from_template = false;
  {
    pqxx::connection admin(base_conninfo_);
    pqxx::nontransaction txn(admin);
    // A migrated database is a copy of the one the fixture migrated at start
    // (tests/support/pg_fixture.sh), not 23 migrations run again for each of
    // ~150 tests; Migrate() below then finds nothing to apply. Without that
    // template (a server started some other way) each test migrates its own.
    from_template =
        migrate &&
        !txn.exec_params("SELECT 1 FROM pg_database WHERE datname = $1", kMigratedTemplate).empty();
    txn.exec0("CREATE DATABASE " + txn.quote_name(name_) +
              (from_template ? " TEMPLATE " + txn.quote_name(kMigratedTemplate) : ""));
  }
  // Later keywords win in a libpq conninfo string.
  conninfo_ = base_conninfo_ + " dbname=" + name_;
  connection_ = std::make_unique<pqxx::connection>(conninfo_);
  if (migrate) store::Migrate(*connection_);
  if (from_template) {
    // Each database its own identity, as if migrated on its own: the spool
    // tells databases apart by this id (schema/008_instance.sql).
    pqxx::work txn(*connection_);
    txn.exec0("UPDATE fabtrack_instance SET id = gen_random_uuid(), created_at = now()");
    txn.commit();
  }
}

TestDatabase::~TestDatabase() {
  connection_.reset();
  try {
    pqxx::connection admin(base_conninfo_);
    pqxx::nontransaction txn(admin);
    txn.exec0("DROP DATABASE IF EXISTS " + txn.quote_name(name_) + " WITH (FORCE)");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot drop " << name_ << ": " << e.what();
  }
}

std::string TestDatabase::Scalar(const std::string& sql) {
  pqxx::nontransaction txn(*connection_);
  pqxx::result r = txn.exec(sql);
  if (r.empty() || r[0][0].is_null()) return "NULL";
  return r[0][0].as<std::string>();
}

}  // namespace fabtrack::testing
