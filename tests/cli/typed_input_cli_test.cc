// What a newcomer mistypes on the command line is refused before anything
// runs, with a one-line message naming the option and the value: times,
// connection strings, names. The real fabtrack binary against PostgreSQL.
#include <gtest/gtest.h>
#include <filesystem>
#include <string>

#include "tests/support/fabtrack_cli.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::Fabtrack;
using fabtrack::testing::TestDatabase;

const std::string kRun = std::string(FABTRACK_FIXTURE_DIR) + "/cli/allreduce_2node_ib.txt";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Times: one check (core/clock.h ParseOperatorTime) for every option that
// takes one, before PostgreSQL sees the value.
TEST(TypedInputCli, TimesThatDoNotExistAreUsageErrorsNamingOptionAndValue) {
  TestDatabase db;
  for (const std::string& at : {"2026-02-30", "0000-01-01", "2026-13-01T00:00:00Z"}) {
    SCOPED_TRACE(at);
    CommandOutput r = Fabtrack("ingest --cluster lab --at " + at + " " + kRun, db);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_TRUE(Has(r.err, "--at: " + at + ": ")) << r.err;
    EXPECT_FALSE(Has(r.err, "database")) << r.err;
  }
  CommandOutput r = Fabtrack("ingest --cluster lab --at 2026-02-30 " + kRun, db);
  EXPECT_TRUE(Has(r.err, "no such date (February 2026 has 28 days)")) << r.err;
  r = Fabtrack("ingest --cluster lab --at 0000-01-01 " + kRun, db);
  EXPECT_TRUE(Has(r.err, "year 0000 is out of range")) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");

  r = Fabtrack("import --cluster lab --host n1 --at 2026-02-29T01:00:00Z " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--at: 2026-02-29T01:00:00Z: no such date")) << r.err;
  r = Fabtrack("ack 0123456789abcdef --cluster lab --until 2027-02-29 --note x", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--until: 2027-02-29: no such date")) << r.err;
  r = Fabtrack("locate --cluster lab --hosts a,b --flagged-since 2026-11-31", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--flagged-since: 2026-11-31: no such date")) << r.err;
  // analyze speaks the monitoring convention: 3, could not analyze.
  r = Fabtrack("analyze --cluster lab --since 2026-06-31", db);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Has(r.err, "--since: 2026-06-31: no such date (June 2026 has 30 days)")) << r.err;
}

TEST(TypedInputCli, ARunTimeFarInTheFutureNeedsAllowFuture) {
  TestDatabase db;
  CommandOutput r = Fabtrack("ingest --cluster lab --at 9999-12-31T23:59:59Z " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--at: 9999-12-31T23:59:59Z: more than a day in the future")) << r.err;
  EXPECT_TRUE(Has(r.err, "--allow-future if it is meant")) << r.err;
  r = Fabtrack("ingest --cluster lab --at 2030-01-01 " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
  r = Fabtrack("analyze --cluster lab --since 2030-01-01", db);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_TRUE(Has(r.err, "--since: 2030-01-01: more than a day in the future")) << r.err;

  // Meant: stored, in UTC, whichever side of --at the flag is.
  r = Fabtrack("ingest --allow-future --cluster lab --at 2030-01-01T03:00:00+01:00 " + kRun, db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI') "
                      "FROM runs"),
            "2030-01-01 02:00");
}

// A name is never empty: refused with the option named, before the
// database's check constraint could answer in its own words.
TEST(TypedInputCli, EmptyNamesAreUsageErrors) {
  TestDatabase db;
  const std::string node = std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/nccl_xml_rail8.xml";
  CommandOutput r = Fabtrack("topology ingest " + node + " --host '' --cluster lab", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--host: '' is empty: give a name")) << r.err;
  r = Fabtrack("topology ingest " + node + " --host n1 --cluster ''", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--cluster: '' is empty: give a name")) << r.err;
  EXPECT_FALSE(Has(r.err, "constraint")) << r.err;
  EXPECT_FALSE(Has(r.err, "DETAIL")) << r.err;
  r = Fabtrack("ingest --cluster ' ' " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--cluster: ' ' is empty")) << r.err;
  r = Fabtrack("ingest --cluster ' lab' " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--cluster: ' lab' has a space at its start or end")) << r.err;
  r = Fabtrack("import --cluster lab --host '' " + kRun, db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  r = Fabtrack("runs list --cluster ''", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM clusters"), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

}  // namespace
}  // namespace fabtrack
