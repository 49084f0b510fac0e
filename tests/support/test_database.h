// A fresh, uniquely named database on the test run's private PostgreSQL
// (FABTRACK_TEST_DB, set by ctest), dropped when the object goes away. Tests
// that need a database fail, never skip, when it is not there.
#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <string>

namespace fabtrack::testing {

class TestDatabase {
 public:
  // migrate: apply the embedded migrations to the new database.
  explicit TestDatabase(bool migrate = true);
  ~TestDatabase();
  TestDatabase(const TestDatabase&) = delete;
  TestDatabase& operator=(const TestDatabase&) = delete;

  const std::string& conninfo() const { return conninfo_; }
  const std::string& name() const { return name_; }
  pqxx::connection& connection() { return *connection_; }
  // Convenience: a single value from a query.
  std::string Scalar(const std::string& sql);

 private:
  std::string base_conninfo_;
  std::string name_;
  std::string conninfo_;
  std::unique_ptr<pqxx::connection> connection_;
};

// The private server's conninfo; fails the test (throws) when unset.
std::string BaseConninfo();

}  // namespace fabtrack::testing
