// Every mistake a newcomer makes on the command line gets one line that
// names what was wrong (the command, the option or word, the value, the OS's
// reason), the README's exit code (2 usage, 1 input), and nothing stored:
// the real binary against a real PostgreSQL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/support/fabtrack_cli.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::Fabtrack;
using fabtrack::testing::TestDatabase;

std::string Fixture(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/cli/" + name;
}

// stderr, one line, naming `what`.
void ExpectOneLine(const CommandOutput& r, const std::string& what) {
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << "one line: " << r.err;
}

TEST(UsageErrors, CountsAndIdsNameTheOptionAndTheValue) {
  TestDatabase db;
  CommandOutput r =
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab --nodes 0", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack ingest: --nodes: must be at least 1, got 0");
  r = Fabtrack("runs list --limit 0", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack runs list: --limit: must be at least 1, got 0");
  r = Fabtrack("runs list --limit 99999999999", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "--limit: 99999999999 is out of range (at most 2147483647)");
  // An id past int64 is named as given, not saturated into another id.
  r = Fabtrack("runs show 99999999999999999999", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r,
                "fabtrack runs show: id: 99999999999999999999 is out of range (at most "
                "9223372036854775807)");
  r = Fabtrack("diff 1 abc", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack diff: run_b: expected a whole number, got abc");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

TEST(UsageErrors, UnknownWordsAreNamedBeforeWhatTheyCaused) {
  TestDatabase db;
  CommandOutput r = Fabtrack("runs lst", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r,
                "fabtrack runs: unknown command 'lst'; did you mean 'list'? (one of: list, ab, "
                "show, delete)");
  // Not "--cluster is required": the misspelt option is the cause.
  r = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --clusterr lab", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack ingest: unknown option --clusterr; did you mean --cluster?");
  EXPECT_EQ(r.err.find("required"), std::string::npos) << r.err;
  r = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster=lab --atx=2026", db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack ingest: unknown option --atx; did you mean --at?");
  // What CLI11 says itself carries the command too.
  r = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt"), db);
  EXPECT_EQ(r.exit_code, 2);
  ExpectOneLine(r, "fabtrack ingest: --cluster is required");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

TEST(UsageErrors, IngestSaysWhyAPathGaveNothing) {
  TestDatabase db;
  const std::string dir = ::testing::TempDir() + "/usage_errors_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir + "/empty");
  std::filesystem::create_directories(dir + "/mix");
  std::filesystem::copy_file(Fixture("allreduce_2node_ib.txt"), dir + "/mix/night1.txt");
  std::ofstream(dir + "/mix/notes.md") << "not a result\n";

  CommandOutput r = Fabtrack("ingest " + dir + "/empty --cluster lab", db);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLine(r, dir + "/empty: folder holds no regular file");

  r = Fabtrack("ingest /nonexistent/night.txt --cluster lab", db);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLine(r, "/nonexistent/night.txt: cannot read: No such file or directory");

  // A quoted glob, as `parse` takes it.
  r = Fabtrack("ingest '" + dir + "/mix/*.txt' --cluster lab", db);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(dir + "/mix/night1.txt: stored run "), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
  r = Fabtrack("ingest '" + dir + "/mix/*.log' --cluster lab", db);
  EXPECT_EQ(r.exit_code, 1);
  ExpectOneLine(r, dir + "/mix/*.log: no file matches");
  std::filesystem::remove_all(dir);
}

TEST(UsageErrors, PruneRefusesAPeriodLongerThanHistory) {
  TestDatabase db;
  for (const char* period : {"99999999999d", "99999999999999999999999999999999w", "40000d"}) {
    CommandOutput r = Fabtrack(std::string("db prune --older-than ") + period, db);
    EXPECT_EQ(r.exit_code, 2) << period << ": " << r.err;
    ExpectOneLine(r, std::string("--older-than ") + period + ": more than a century");
  }
  CommandOutput r = Fabtrack("db prune --older-than 36600d", db);
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace fabtrack
