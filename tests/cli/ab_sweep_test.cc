// `fabtrack sweep --ab` for real: fabtrack-allreduce ranks under mpirun,
// side B's ranks with an Open MPI TCP setting passed by `mpirun -x`, both
// sides stored in a real PostgreSQL as ordinary runs that record the setting
// (the ranks' own environment, read by rank 0), the verdict stored with its
// judgements and linked to every run; `fabtrack diff` names the setting.
// With the database away, the runs and the verdict are spooled and a replay
// stores them, the verdict linked to the replayed runs.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::TestDatabase;

constexpr const char* kSetting = "OMPI_MCA_btl_tcp_eager_limit=4096";
// Small sizes, few iterations: each of the four sweeps takes seconds.
constexpr const char* kHarnessFlags = "-- -b 8 -e 32K -f 8 -n 3 -w 1 -q";  // 5 sizes

// `fabtrack <args>` against `conninfo`: --db goes before a "--" (what
// follows that is the benchmark's).
CommandOutput Fabtrack(std::string args, const std::string& conninfo, const std::string& spool) {
  const size_t benchmark = args.find(" -- ");
  args.insert(benchmark == std::string::npos ? args.size() : benchmark, " --db '" + conninfo + "'");
  return fabtrack::testing::RunCommand("env FABTRACK_SPOOL_DIR='" + spool + "' " +
                                       std::string(FABTRACK_CLI) + " " + args);
}

std::string SpoolFor(const TestDatabase& db) {
  const std::string dir = ::testing::TempDir() + "/ab_sweep_spool_" + db.name();
  std::filesystem::remove_all(dir);
  return dir;
}

TEST(AbSweep, StoresBothSidesWithTheSettingAndTheVerdict) {
  TestDatabase db;
  const std::string spool = SpoolFor(db);
  CommandOutput r = Fabtrack(std::string("sweep --nodes 2 --cluster lab --ab ") + kSetting +
                                 " --format json " + kHarnessFlags,
                             db.conninfo(), spool);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // stdout is the verdict document alone (the ranks' tables went to stderr).
  nlohmann::json doc = nlohmann::json::parse(r.out);
  EXPECT_EQ(doc["setting"], kSetting);
  EXPECT_EQ(doc["order"], "ABBA");
  EXPECT_EQ(doc["rounds"], 2);
  const std::set<std::string> outcomes = {"no_difference", "b_faster", "b_slower", "mixed"};
  EXPECT_TRUE(outcomes.count(doc["outcome"].get<std::string>())) << doc["outcome"];
  ASSERT_EQ(doc["headlines"].size(), 2u) << doc.dump();
  EXPECT_EQ(doc["headlines"][0]["metric"], "busbw");
  EXPECT_EQ(doc["headlines"][0]["nodes"], 2);
  EXPECT_EQ(doc["headlines"][0]["a"].size(), 2u);  // one value per round and side
  EXPECT_EQ(doc["sizes"].size(), 2u * 5u) << "8 B .. 32 KiB, busbw and time";

  // Four ordinary runs, in the order A B B A, side B's ranks with the setting.
  EXPECT_EQ(db.Scalar("SELECT string_agg(tags->>'ab_side', '' ORDER BY started_at, id) FROM runs"),
            "ABBA");
  EXPECT_EQ(db.Scalar("SELECT string_agg(tags->>'ab_round', '' ORDER BY started_at, id) FROM runs"),
            "1122");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT tags->>'ab_id') FROM runs"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT sweep_id) FROM runs"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE tags->>'ab_side' = 'B' AND "
                      "nccl_env->>'OMPI_MCA_btl_tcp_eager_limit' = '4096' AND "
                      "tags->>'ab_setting' = '" +
                      std::string(kSetting) + "'"),
            "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE tags->>'ab_side' = 'A' AND "
                      "NOT nccl_env ? 'OMPI_MCA_btl_tcp_eager_limit' AND NOT tags ? 'ab_setting'"),
            "2");
  EXPECT_EQ(db.Scalar("SELECT bool_and(status = 'complete' AND nodes = 2) FROM runs"), "t");

  // The verdict row, its judgements, and the links to the four runs.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ab_comparisons"), "1");
  // The document says where it is stored: the comparison's id and each
  // run's, with its side and round.
  EXPECT_EQ(doc["comparison_id"].dump(), db.Scalar("SELECT id FROM ab_comparisons")) << doc.dump();
  ASSERT_EQ(doc["runs"].size(), 4u) << doc.dump();
  std::string sides, rounds, ids;
  for (const nlohmann::json& run : doc["runs"]) {
    sides += run["side"].get<std::string>();
    rounds += std::to_string(run["round"].get<int>());
    ids += (ids.empty() ? "" : ",") + run["run_id"].dump();
  }
  EXPECT_EQ(sides, "ABBA");
  EXPECT_EQ(rounds, "1122");
  EXPECT_EQ(ids, db.Scalar("SELECT string_agg(id::text, ',' ORDER BY started_at, id) FROM runs"));
  // `runs ab` lists the stored comparison with its runs.
  CommandOutput listed = Fabtrack("runs ab --format json", db.conninfo(), spool);
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  const nlohmann::json list = nlohmann::json::parse(listed.out);
  ASSERT_EQ(list.size(), 1u) << listed.out;
  EXPECT_EQ(list[0]["id"], doc["comparison_id"]);
  EXPECT_EQ(list[0]["setting"], kSetting);
  EXPECT_EQ(list[0]["outcome"], doc["outcome"]);
  EXPECT_EQ(list[0]["run_ids"].size(), 4u) << listed.out;
  EXPECT_EQ(db.Scalar("SELECT setting || ' ' || run_order || ' ' || outcome || ' ' || "
                      "(ab_id = (SELECT min(tags->>'ab_id') FROM runs)) FROM ab_comparisons"),
            std::string(kSetting) + " ABBA " + doc["outcome"].get<std::string>() + " true");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ab_judgements WHERE size_bytes IS NULL"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ab_judgements"), "12");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ab_comparison_runs l JOIN runs r ON r.id = l.run_id "
                      "WHERE l.side = r.tags->>'ab_side' AND l.round::text = r.tags->>'ab_round'"),
            "4");
  // The stored a/b values are the runs' own numbers: side A's busbw at 32K
  // in round order.
  EXPECT_EQ(
      db.Scalar("SELECT j.a::text = (SELECT array_agg(rr.oop_busbw_gbps ORDER BY r.started_at)"
                "::text FROM runs r JOIN run_results rr ON rr.run_id = r.id "
                "WHERE r.tags->>'ab_side' = 'A' AND rr.size_bytes = 32768) "
                "FROM ab_judgements j WHERE metric = 'busbw' AND size_bytes = 32768"),
      "t");

  // `fabtrack diff` of round 1's A and B names the setting.
  const std::string a =
      db.Scalar("SELECT id FROM runs WHERE tags->>'ab_side' = 'A' AND tags->>'ab_round' = '1'");
  const std::string b =
      db.Scalar("SELECT id FROM runs WHERE tags->>'ab_side' = 'B' AND tags->>'ab_round' = '1'");
  CommandOutput diff = Fabtrack("diff " + a + " " + b + " --format json", db.conninfo(), spool);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  std::map<std::string, nlohmann::json> facts;
  const nlohmann::json diff_doc = nlohmann::json::parse(diff.out);
  for (const auto& f : diff_doc["facts"]) facts[f["name"].get<std::string>()] = f;
  ASSERT_TRUE(facts.count("OMPI_MCA_btl_tcp_eager_limit")) << diff.out;
  EXPECT_TRUE(facts["OMPI_MCA_btl_tcp_eager_limit"]["before"].is_null());
  EXPECT_EQ(facts["OMPI_MCA_btl_tcp_eager_limit"]["after"], "4096");
  EXPECT_EQ(facts["tag ab_setting"]["after"], kSetting);

  // The analysis judges side A only: side B's setting is an experiment, not
  // the cluster's state.
  CommandOutput analysis = Fabtrack(
      "analyze --cluster lab --since 2000-01-01T00:00:00Z --format json", db.conninfo(), spool);
  ASSERT_NE(analysis.exit_code, 3) << analysis.err;
  EXPECT_EQ(nlohmann::json::parse(analysis.out)["judged_runs"], 2) << analysis.out;
}

TEST(AbSweep, DatabaseAwaySpoolsRunsAndVerdictAndTheReplayLinksThem) {
  TestDatabase db, other;
  const std::string spool = SpoolFor(db);
  other.Scalar("ALTER DATABASE " + db.name() + " ALLOW_CONNECTIONS false");
  CommandOutput r =
      Fabtrack(std::string("sweep --nodes 2 --cluster lab --ab NCCL_ALGO=Ring --ab-rounds 2 ") +
                   kHarnessFlags,
               db.conninfo(), spool);
  other.Scalar("ALTER DATABASE " + db.name() + " ALLOW_CONNECTIONS true");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;  // an outage is waited out
  EXPECT_NE(r.out.find("A/B comparison spooled"), std::string::npos) << r.out;
  // The summary counts runs as runs; the fifth batch is the comparison.
  EXPECT_NE(r.out.find(": 0 of 4 runs stored, 4 spooled, and the A/B comparison spooled "
                       "(database unavailable)"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("verdict: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("all_reduce, 2 nodes, busbw (large sizes): B/A "), std::string::npos)
      << r.out;
  CommandOutput status = fabtrack::testing::RunCommand("env FABTRACK_SPOOL_DIR='" + spool + "' " +
                                                       std::string(FABTRACK_CLI) + " spool status");
  EXPECT_NE(status.out.find("5 batch(es)"), std::string::npos) << status.out;  // 4 runs, 1 verdict

  CommandOutput replay = Fabtrack("spool replay", db.conninfo(), spool);
  ASSERT_EQ(replay.exit_code, 0) << replay.out << replay.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "4");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE nccl_env->>'NCCL_ALGO' = 'Ring'"), "2");
  EXPECT_EQ(db.Scalar("SELECT setting FROM ab_comparisons"), "NCCL_ALGO=Ring");
  EXPECT_EQ(db.Scalar("SELECT string_agg(side, '' ORDER BY round, side) FROM ab_comparison_runs"),
            "ABAB");
  // A second replay (a crash between commit and removal) stores nothing twice.
  Fabtrack("spool replay", db.conninfo(), spool);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ab_comparisons"), "1");
}

TEST(AbSweep, RefusesASettingThatIsNotOne) {
  TestDatabase db;
  const std::string spool = SpoolFor(db);
  CommandOutput r =
      Fabtrack("sweep --nodes 1 --cluster lab --ab NCCL_ALGO " + std::string(kHarnessFlags),
               db.conninfo(), spool);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--ab NCCL_ALGO: expected NAME=VALUE"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
  CommandOutput json =
      Fabtrack("sweep --nodes 1 --cluster lab --format json " + std::string(kHarnessFlags),
               db.conninfo(), spool);
  EXPECT_EQ(json.exit_code, 2) << json.err;
}

// nccl-lib=DIR names a folder side B loads NCCL from: one that is not there,
// holds no libnccl.so.2, or holds something that is not a shared library is
// refused before any round runs (else side B quietly loads the default NCCL
// and the verdict compares a library with itself), naming the path.
TEST(AbSweep, RefusesAnNcclFolderSideBCouldNotLoad) {
  TestDatabase db;
  const std::string spool = SpoolFor(db);
  const std::string empty = ::testing::TempDir() + "/ab_nccl_lib_empty";
  const std::string fake = ::testing::TempDir() + "/ab_nccl_lib_fake";
  std::filesystem::remove_all(empty);
  std::filesystem::remove_all(fake);
  std::filesystem::create_directories(empty);
  std::filesystem::create_directories(fake);
  std::ofstream(fake + "/libnccl.so.2") << "not a library\n";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"/nonexistent/nccl/lib", "/nonexistent/nccl/lib: No such file or directory"},
      {empty, empty + ": no libnccl.so.2 in this folder"},
      {fake, fake + "/libnccl.so.2: not a shared library"},
      {fake + "/libnccl.so.2", fake + "/libnccl.so.2: not a folder"}};
  for (const auto& [dir, message] : cases) {
    CommandOutput r = Fabtrack(
        "sweep --nodes 1 --cluster lab --ab nccl-lib=" + dir + " " + std::string(kHarnessFlags),
        db.conninfo(), spool);
    EXPECT_EQ(r.exit_code, 2) << dir << "\n" << r.out << r.err;
    EXPECT_NE(r.err.find("fabtrack sweep: --ab nccl-lib=" + dir + ": " + message),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out.find("side A"), std::string::npos) << "a round ran: " << r.out;
    EXPECT_EQ(r.out.find("sweep "), std::string::npos) << "the sweep started: " << r.out;
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

}  // namespace
}  // namespace fabtrack
