// Problems end to end: the real fabtrack binary against PostgreSQL. A night
// with a critical run is one problem with an id; `fabtrack ack` silences it
// until a date (the exit status, the verdict and the textfile follow), and
// refuses ids that name nothing and dates in the past.
#include <gtest/gtest.h>

#include <filesystem>
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
    EXPECT_EQ(p["ack"]["until"], "2099-01-01T23:59:59Z");  // through that day
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

// A problem seen again is ongoing from its first night, whatever window the
// analysis judged: the nightly run (default window, the newest night only)
// says what a --since covering both nights says, in the verdict, the JSON
// and the textfile that alerts read.
TEST(ProblemsCli, ARecurringProblemIsOngoingWithTheDefaultWindow) {
  TestDatabase db;
  const std::string fixture =
      std::string(FABTRACK_FIXTURE_DIR) + "/cli/allreduce_2node_ib_retry_exceeded.txt";
  // The same failure on two nights: two files (a run is stored once per content).
  const std::string night2 =
      ::testing::TempDir() + "/retry_exceeded_night2_" + std::to_string(getpid()) + ".txt";
  {
    std::ifstream in(fixture);
    std::ofstream out(night2);
    out << in.rdbuf() << "# the next night, the same cable\n";
  }
  ASSERT_EQ(Fabtrack("ingest --cluster lab --at 2026-12-02T02:00:00Z " + fixture, db).exit_code, 0);
  CommandOutput r = Fabtrack("analyze --cluster lab --format json", db);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  ASSERT_FALSE(doc["problems"].empty());
  EXPECT_EQ(doc["problems"][0]["state"], "new");

  ASSERT_EQ(Fabtrack("ingest --cluster lab --at 2026-12-03T02:00:00Z " + night2, db).exit_code, 0);
  const std::string textfile = ::testing::TempDir() + "/recurring_" + std::to_string(getpid());
  r = Fabtrack("analyze --cluster lab --format json --textfile " + textfile, db);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  EXPECT_NE(r.err.find("findings stored: 0 new, 2 still open"), std::string::npos) << r.err;
  doc = nlohmann::json::parse(r.out);
  ASSERT_EQ(doc["problems"].size(), 2u) << r.out;
  for (const auto& p : doc["problems"]) {
    SCOPED_TRACE(p.dump());
    EXPECT_EQ(p["state"], "ongoing");
    EXPECT_EQ(p["first_seen"].get<std::string>().substr(0, 10), "2026-12-02");
    EXPECT_EQ(p["nights"], 2);
  }
  const std::string verdict = doc["verdict"];
  EXPECT_NE(verdict.find("(ongoing, since 2026-12-02, 2 nights)"), std::string::npos) << verdict;
  std::ifstream in(textfile);
  const std::string metrics((std::istreambuf_iterator<char>(in)), {});
  EXPECT_NE(metrics.find("state=\"ongoing\""), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("state=\"new\""), std::string::npos) << metrics;
  EXPECT_EQ(db.Scalar("SELECT min(nights) || ',' || max(nights) FROM findings "
                      "WHERE state <> 'resolved' AND severity = 'critical'"),
            "2,2");

  // Analysed again with both nights in the window: the same answer, and the
  // stored nights are not counted twice.
  r = Fabtrack("analyze --cluster lab --since 2026-12-01T12:00:00Z --format json", db);
  doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["problems"][0]["state"], "ongoing");
  EXPECT_EQ(doc["problems"][0]["nights"], 2);
  r = Fabtrack("analyze --cluster lab --format json", db);
  doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["problems"][0]["nights"], 2) << r.out;
  EXPECT_EQ(doc["problems"][0]["state"], "ongoing");
  std::remove(textfile.c_str());
  std::remove(night2.c_str());
}

// Issue 33: a multi-node run without RDMA, night after night, is one problem
// (rdma_absent, its socket fallback folded in), not two; the fallback's
// stored finding says what explains it. A cluster declared socket-only gets
// one info note per run and no problem.
TEST(ProblemsCli, NoRdmaIsOneProblemNotTwoAndOneNoteWhenDeclared) {
  TestDatabase db;
  const std::string night1 = std::string(FABTRACK_SOURCE_DIR) +
                             "/examples/lab-cluster/2026-11-29_allreduce_4node_socket_fallback.txt";
  const std::string dir = ::testing::TempDir() + "/no_rdma_" + std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string night2 = dir + "/night2.txt";
  {
    std::ifstream in(night1);
    std::ofstream out(night2);
    out << in.rdbuf() << "# the next night, the same image without rdma-core\n";
  }
  ASSERT_EQ(Fabtrack("ingest --cluster sock --at 2026-11-29T02:00:00Z " + night1, db).exit_code, 0);
  ASSERT_EQ(Fabtrack("ingest --cluster sock --at 2026-11-30T02:00:00Z " + night2, db).exit_code, 0);
  CommandOutput r =
      Fabtrack("analyze --cluster sock --since 2026-11-01T00:00:00Z --format json", db);
  ASSERT_EQ(r.exit_code, 2) << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out);
  std::vector<nlohmann::json> transport;
  for (const auto& p : doc["problems"]) {
    if (p["kind"] == "rdma_absent" || p["kind"] == "socket_fallback") transport.push_back(p);
  }
  ASSERT_EQ(transport.size(), 1u) << doc["problems"].dump(1);
  EXPECT_EQ(transport[0]["kind"], "rdma_absent");
  EXPECT_EQ(transport[0]["nights"], 2);
  ASSERT_EQ(transport[0]["related"].size(), 1u);
  EXPECT_EQ(transport[0]["related"][0]["kind"], "socket_fallback");
  EXPECT_EQ(db.Scalar("SELECT string_agg(kind || ':' || coalesce(evidence->>'explained_by', '-'), "
                      "',' ORDER BY kind) FROM findings WHERE kind IN ('rdma_absent', "
                      "'socket_fallback')"),
            "rdma_absent:-,socket_fallback:rdma_absent");

  const std::string config = dir + "/socket.conf";
  std::ofstream(config) << "[cluster]\ntransport = socket\n";
  r = Fabtrack(
      "analyze --cluster sock --since 2026-11-01T00:00:00Z --format json --no-store "
      "--config " +
          config,
      db);
  doc = nlohmann::json::parse(r.out);
  for (const auto& p : doc["problems"]) {
    EXPECT_NE(p["kind"], "rdma_absent") << p.dump();
    EXPECT_NE(p["kind"], "socket_fallback") << p.dump();
  }
  int notes = 0;
  for (const auto& f : doc["findings"]) {
    if (f["kind"] != "rdma_absent" && f["kind"] != "socket_fallback") continue;
    ++notes;
    EXPECT_EQ(f["severity"], "info") << f.dump();
    EXPECT_EQ(f["kind"], "rdma_absent") << f.dump();
  }
  EXPECT_EQ(notes, 2);  // one per run
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabtrack
