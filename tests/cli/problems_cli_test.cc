// Problems end to end: the real fabtrack binary against PostgreSQL. A night
// with a critical run is one problem with an id; `fabtrack ack` silences it
// until a date (the exit status, the verdict and the textfile follow), and
// refuses ids that name nothing and dates in the past.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/fabtrack_cli.h"
#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::Fabtrack;
using fabtrack::testing::TestDatabase;

TEST(ProblemsCli, AckSilencesAProblemUntilItsDate) {
  TestDatabase db;
  ASSERT_EQ(
      Fabtrack("ingest --cluster lab --at 2026-12-03T02:00:00Z " +
                   std::string(FABTRACK_FIXTURE_DIR) + "/cli/allreduce_2node_ib_retry_exceeded.txt",
               db)
          .exit_code,
      0);
  const std::string textfile = ::testing::TempDir() + "/problems_" + std::to_string(getpid());
  CommandOutput r = Fabtrack(
      "analyze --cluster lab --since 2026-12-03T00:00:00Z --format json "
      "--textfile " +
          textfile,
      db);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_FALSE(doc["problems"].empty()) << r.out;
  const nlohmann::json top = doc["problems"][0];
  EXPECT_EQ(top["severity"], "critical");
  EXPECT_EQ(top["state"], "new");
  EXPECT_EQ(
      doc["verdict"].get<std::string>().rfind("CRITICAL: " + top["kind"].get<std::string>(), 0), 0u)
      << doc["verdict"];
  const std::string id = top["id"];
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM findings WHERE fingerprint = '" + id + "'"), "1");

  // Refused: an id that names nothing, a date in the past, no note.
  r = Fabtrack("ack 0123456789abcdef --cluster lab --until 2099-01-01 --note x", db);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("cluster lab has no problem 0123456789abcdef"), std::string::npos) << r.err;
  r = Fabtrack("ack " + id + " --cluster lab --until 2020-01-01 --note x", db);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("not in the future"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM problem_acks"), "0");

  r = Fabtrack("ack " + id + " --cluster lab --until 2099-01-01 --note 'RMA 4411, cable ordered'",
               db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Fabtrack(
      "analyze --cluster lab --since 2026-12-03T00:00:00Z --format json --textfile " + textfile,
      db);
  doc = nlohmann::json::parse(r.out);
  bool found = false;
  for (const auto& p : doc["problems"]) {
    if (p["id"] != id) continue;
    found = true;
    EXPECT_EQ(p["state"], "acknowledged");
    EXPECT_EQ(p["ack"]["note"], "RMA 4411, cable ordered");
    EXPECT_EQ(p["ack"]["until"], "2099-01-01T00:00:00Z");
  }
  EXPECT_TRUE(found);
  // The night has a second critical problem (the run failed): still 2 until
  // it is acknowledged too, then nothing counts.
  ASSERT_EQ(doc["problems"].size(), 2u) << r.out;
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(doc["problems"][0]["state"], "new");  // open ones first
  const std::string other = doc["problems"][0]["id"];
  ASSERT_EQ(Fabtrack("ack " + other + " --cluster lab --until 2099-01-01 --note 'same cable'", db)
                .exit_code,
            0);
  r = Fabtrack(
      "analyze --cluster lab --since 2026-12-03T00:00:00Z --format json --textfile " + textfile,
      db);
  doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(doc["exit_status"], 0);
  EXPECT_EQ(doc["verdict"], "OK: no problem (2 acknowledged)");
  std::ifstream in(textfile);
  std::string metrics((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(metrics.find("fabtrack_problem{cluster=\"lab\",id=\"" + id), std::string::npos);
  EXPECT_NE(metrics.find("state=\"acknowledged\""), std::string::npos) << metrics;
  std::remove(textfile.c_str());
}

}  // namespace
}  // namespace fabtrack
