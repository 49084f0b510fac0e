// What a newcomer mistypes on the command line is refused before anything
// runs, with a one-line message naming the option and the value: times,
// connection strings, names. The real fabtrack binary against PostgreSQL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
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
  for (const std::string at : {"2026-02-30", "0000-01-01", "2026-13-01T00:00:00Z"}) {
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

TEST(TypedInputCli, AckUntilADateSilencesThroughTheEndOfThatDay) {
  TestDatabase db;
  ASSERT_EQ(
      Fabtrack("ingest --cluster lab --at 2026-12-03T02:00:00Z " +
                   std::string(FABTRACK_FIXTURE_DIR) + "/cli/allreduce_2node_ib_retry_exceeded.txt",
               db)
          .exit_code,
      0);
  CommandOutput r = Fabtrack("analyze --cluster lab --since 2026-12-03 --format json", db);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  const std::string id = db.Scalar("SELECT fingerprint FROM findings ORDER BY id LIMIT 1");
  r = Fabtrack("ack " + id + " --cluster lab --until 2099-12-31 --note 'RMA 4411'", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(Has(r.out, "acknowledged until 2099-12-31T23:59:59Z")) << r.out;
  EXPECT_EQ(db.Scalar("SELECT to_char(until AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS') "
                      "FROM problem_acks"),
            "2099-12-31 23:59:59");
}

// Files under the test's spool directory (FABTRACK_SPOOL_DIR, set by ctest).
int SpooledFiles() {
  const char* dir = std::getenv("FABTRACK_SPOOL_DIR");
  if (dir == nullptr || !std::filesystem::exists(dir)) return 0;
  int n = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    n += entry.is_regular_file();
  }
  return n;
}

CommandOutput FabtrackWithDb(const std::string& args, const std::string& conninfo) {
  return fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " " + args + " --db '" +
                                       conninfo + "'");
}

// A typo in --db is the operator's to fix: refused by libpq's own parser
// before any connection attempt, nothing spooled under a target nobody can
// name again.
TEST(TypedInputCli, AConninfoLibpqCannotParseIsAUsageErrorAndNothingIsSpooled) {
  const int spooled_before = SpooledFiles();
  CommandOutput r = FabtrackWithDb("ingest --cluster lab " + kRun, "hostt=/run/x dbname=fabtrack");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err,
                  "--db: hostt=*** dbname=fabtrack: libpq cannot parse it: invalid "
                  "connection option \"hostt\""))
      << r.err;
  EXPECT_FALSE(Has(r.err, "spooled")) << r.err;
  EXPECT_EQ(SpooledFiles(), spooled_before);
  // The same from FABTRACK_DB, which no flag parser sees.
  r = fabtrack::testing::RunCommand("FABTRACK_DB='hostt=/run/x dbname=fabtrack' " +
                                    std::string(FABTRACK_CLI) + " ingest --cluster lab " + kRun);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "FABTRACK_DB hostt=*** dbname=fabtrack: libpq cannot parse it")) << r.err;
  EXPECT_EQ(SpooledFiles(), spooled_before);
  r = FabtrackWithDb("runs list", "postgresql://db/fabtrack?hostt=x");
  EXPECT_EQ(r.exit_code, 2) << r.err;
}

// A misspelt password keyword is still a password: never echoed.
TEST(TypedInputCli, AMisspeltPasswordKeywordIsNeverPrinted) {
  for (const std::string& conninfo : {std::string("host=/run/x passwrd=hunter2 dbname=fabtrack"),
                                      std::string("host=/run/x dbname=fabtrack pasword = hunter2"),
                                      std::string("postgresql://w@db/fabtrack?passwrd=hunter2")}) {
    SCOPED_TRACE(conninfo);
    CommandOutput r = FabtrackWithDb("runs list", conninfo);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(Has(r.err + r.out, "hunter2")) << r.err;
    EXPECT_TRUE(Has(r.err, "***")) << r.err;
    r = fabtrack::testing::RunCommand("FABTRACK_DB=\"" + conninfo + "\" " +
                                      std::string(FABTRACK_CLI) + " runs list");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_FALSE(Has(r.err + r.out, "hunter2")) << r.err;
  }
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

// A launcher that only notes it was started: a sweep that gets this far
// has started ranks.
std::string FakeLauncher(const std::string& marker) {
  const std::string path = ::testing::TempDir() + "/fake_mpirun_" + std::to_string(getpid());
  {
    std::ofstream out(path);
    out << "#!/bin/sh\ntouch " << marker << "\nexit 0\n";
  }
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

// Benchmark flags and --ab are checked before the sweep prints its header or
// the launcher starts a rank.
TEST(TypedInputCli, BadSweepFlagsAreRefusedBeforeAnyRankStarts) {
  TestDatabase db;
  const std::string marker = ::testing::TempDir() + "/launched_" + std::to_string(getpid());
  std::remove(marker.c_str());
  const std::string sweep =
      "sweep --nodes 1 --cluster lab --ports off --allreduce /bin/true "
      "--mpirun " +
      FakeLauncher(marker);
  CommandOutput r = Fabtrack(sweep + " --ab NOEQUALS", db);
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "--ab NOEQUALS: ")) << r.err;
  EXPECT_EQ(r.out, "");  // no sweep header
  EXPECT_FALSE(std::filesystem::exists(marker));

  // fabtrack-allreduce's flags after "--": its own parser, here.
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " " + sweep + " --db '" +
                                    db.conninfo() + "' -- -b 8Q");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_TRUE(Has(r.err, "fabtrack-allreduce flags after --: -b 8Q: not a size")) << r.err;
  EXPECT_EQ(r.out, "");
  EXPECT_FALSE(std::filesystem::exists(marker));
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " " + sweep + " --db '" +
                                    db.conninfo() + "' -- -e 4K -b 8K --bogus");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));

  // Good flags do reach the launcher.
  r = fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " " + sweep + " --db '" +
                                    db.conninfo() + "' -- -b 8 -e 1K -f 2");
  EXPECT_TRUE(std::filesystem::exists(marker)) << r.out << r.err;
  std::remove(marker.c_str());
}

}  // namespace
}  // namespace fabtrack
