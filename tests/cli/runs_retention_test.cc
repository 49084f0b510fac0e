// `runs list` in its three formats, `runs delete` and `db prune` against a
// real PostgreSQL: what is listed, deleted and kept is read back with SQL.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

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

// Two runs of cluster lab (one made 500 days old) and one of a cluster with
// a long name, so that a column wider than the old fixed widths is present.
void StoreThreeRuns(TestDatabase& db) {
  int night = 0;
  for (const char* cluster : {"lab", "lab", "a-cluster-name-longer-than-ten"}) {
    // A copy per night (runs are stored once per content): the same table
    // with its own trailing comment line, as nightly logs differ.
    const std::string copy = ::testing::TempDir() + "/retention_night" + std::to_string(++night) +
                             "_" + std::to_string(getpid()) + ".txt";
    std::ofstream(copy) << std::ifstream(Fixture("allreduce_2node_ib.txt")).rdbuf() << "# night "
                        << night << "\n";
    CommandOutput r = Fabtrack("ingest " + copy + " --cluster " + cluster, db);
    std::filesystem::remove(copy);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    ASSERT_NE(r.out.find("stored run"), std::string::npos) << r.out;
  }
  db.Scalar(
      "UPDATE runs SET started_at = now() - interval '500 days' "
      "WHERE id = (SELECT min(id) FROM runs WHERE cluster = 'lab')");
}

TEST(RunsRetention, TableColumnsLineUpWhateverTheContent) {
  TestDatabase db;
  StoreThreeRuns(db);
  CommandOutput r = Fabtrack("runs list", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string header, line;
  std::getline(lines, header);
  const size_t status_at = header.find("status");
  const size_t network_at = header.find("network");
  ASSERT_NE(status_at, std::string::npos);
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    // Every row's status and network columns start where their headers do.
    EXPECT_EQ(line.find_last_of(' ') + 1, status_at) << line;
    EXPECT_EQ(line.substr(network_at, 2), "IB") << line;
  }
  EXPECT_EQ(rows, 3);
}

TEST(RunsRetention, CsvIsOneRowPerRunWithTheHeader) {
  TestDatabase db;
  StoreThreeRuns(db);
  CommandOutput r = Fabtrack("runs list --format csv", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);
  EXPECT_EQ(line.rfind("id,started_at,cluster,source,", 0), 0u) << line;
  int rows = 0;
  while (std::getline(lines, line)) {
    ++rows;
    EXPECT_EQ(line.back(), '\r');  // RFC 4180 line ends
    // transports "P2P/IPC,NET/IB" holds a comma: quoted.
    EXPECT_NE(line.find("\"P2P/IPC,NET/IB\""), std::string::npos) << line;
  }
  EXPECT_EQ(rows, 3);
}

// JSON has the columns the table and CSV have: lat_small (the time of the
// smallest non-zero size) too.
TEST(RunsRetention, JsonHasTheSmallMessageLatency) {
  TestDatabase db;
  StoreThreeRuns(db);
  CommandOutput r = Fabtrack("runs list --format json", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json runs = nlohmann::json::parse(r.out);
  ASSERT_EQ(runs.size(), 3u);
  const std::string expected = db.Scalar(
      "SELECT oop_time_us FROM run_results WHERE run_id = (SELECT max(id) FROM runs) AND "
      "size_bytes > 0 ORDER BY size_bytes, row_index LIMIT 1");
  ASSERT_TRUE(runs[0].contains("lat_small_us")) << runs[0].dump();
  EXPECT_DOUBLE_EQ(runs[0]["lat_small_us"].get<double>(), std::stod(expected)) << runs[0].dump();
}

// `runs ab` lists the stored `sweep --ab` comparisons, newest first, with
// the runs of both sides (tests/cli/ab_sweep_test.cc makes real ones).
TEST(RunsRetention, AbListsTheStoredComparisons) {
  TestDatabase db;
  StoreThreeRuns(db);
  CommandOutput none = Fabtrack("runs ab", db);
  ASSERT_EQ(none.exit_code, 0) << none.err;
  EXPECT_NE(none.out.find("(no A/B comparisons"), std::string::npos) << none.out;
  db.Scalar(
      "INSERT INTO ab_comparisons (cluster, ab_id, compared_at, setting, rounds, run_order, "
      "outcome, content_hash) VALUES ('lab', 'ab-old', now() - interval '2 days', "
      "'NCCL_ALGO=Ring', 1, 'AB', 'inconclusive', 'h1'), ('lab', 'ab-new', now(), "
      "'nccl-lib=/opt/nccl-2.23.4/lib', 2, 'ABBA', 'b_faster', 'h2') RETURNING 1");
  db.Scalar(
      "INSERT INTO ab_comparison_runs (comparison_id, run_id, side, round) SELECT c.id, r.id, "
      "CASE WHEN r.id % 2 = 0 THEN 'A' ELSE 'B' END, 1 FROM ab_comparisons c, runs r "
      "WHERE c.ab_id = 'ab-new' AND r.cluster = 'lab' RETURNING 1");
  CommandOutput r = Fabtrack("runs ab --format json", db);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const nlohmann::json list = nlohmann::json::parse(r.out);
  ASSERT_EQ(list.size(), 2u) << r.out;
  EXPECT_EQ(list[0]["ab_id"], "ab-new");
  EXPECT_EQ(list[0]["setting"], "nccl-lib=/opt/nccl-2.23.4/lib");
  EXPECT_EQ(list[0]["outcome"], "b_faster");
  EXPECT_EQ(list[0]["order"], "ABBA");
  EXPECT_EQ(list[0]["run_ids"].size(), 2u) << r.out;
  EXPECT_EQ(list[1]["ab_id"], "ab-old");
  EXPECT_TRUE(list[1]["run_ids"].empty());

  CommandOutput table = Fabtrack("runs ab --limit 1", db);
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_EQ(table.out.rfind("id  compared_at", 0), 0u) << table.out;
  EXPECT_NE(table.out.find("nccl-lib=/opt/nccl-2.23.4/lib  ABBA   b_faster"), std::string::npos)
      << table.out;
  EXPECT_EQ(table.out.find("ab-old"), std::string::npos) << table.out;
  CommandOutput csv = Fabtrack("runs ab --format csv --cluster elsewhere", db);
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out, "id,compared_at,cluster,setting,order,outcome,runs,ab_id\r\n");
}

TEST(RunsRetention, DeleteRemovesTheRunAndWhatHangsOffIt) {
  TestDatabase db;
  StoreThreeRuns(db);
  const std::string id = db.Scalar("SELECT max(id) FROM runs");
  ASSERT_NE(db.Scalar("SELECT count(*) FROM run_results WHERE run_id = " + id), "0");
  // One id not there (a typo): nothing deleted, not even the ones that are.
  CommandOutput r = Fabtrack("runs delete " + id + " 999999 --yes", db);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no run 999999"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing deleted"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("deleted run"), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");
  // A dry run until --yes, as `db prune`.
  r = Fabtrack("runs delete " + id, db);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("would delete run " + id), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("--yes deletes"), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");
  r = Fabtrack("runs delete " + id + " --yes", db);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("deleted run " + id), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE id = " + id), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results WHERE run_id = " + id), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "2");
}

TEST(RunsRetention, PruneIsADryRunUntilYes) {
  TestDatabase db;
  StoreThreeRuns(db);
  CommandOutput dry = Fabtrack("db prune --older-than 400d", db);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("would delete"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("runs                  1 "), std::string::npos) << dry.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");

  CommandOutput other = Fabtrack("db prune --older-than 400d --cluster elsewhere --yes", db);
  ASSERT_EQ(other.exit_code, 0) << other.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");  // another cluster's history

  CommandOutput wet = Fabtrack("db prune --older-than 400d --yes", db);
  ASSERT_EQ(wet.exit_code, 0) << wet.err;
  EXPECT_NE(wet.out.find("deleted, older than"), std::string::npos) << wet.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE started_at < now() - interval '400 days'"),
            "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results WHERE run_id NOT IN (SELECT id FROM runs)"),
            "0");
}

// Verdict records (a locate verdict, an A/B comparison) go by their own
// age, with what hangs off them; a recent one stays.
TEST(RunsRetention, PruneRemovesOldVerdictRecords) {
  TestDatabase db;
  StoreThreeRuns(db);
  for (const char* age : {"500 days", "1 day"}) {
    const std::string at = std::string("now() - interval '") + age + "'";
    db.Scalar(
        "INSERT INTO locate_verdicts (cluster, located_at, hosts, nodes, rounds, seconds, probes, "
        "settled, exit_status, content_hash) VALUES ('lab', " +
        at + ", '{n1,n2}', 2, 1, 1.5, 2, true, 0, md5((" + at + ")::text)) RETURNING id");
    db.Scalar(
        "INSERT INTO ab_comparisons (cluster, ab_id, compared_at, setting, rounds, run_order, "
        "outcome, content_hash) VALUES ('lab', 'ab-" +
        std::string(age) + "', " + at + ", 'NCCL_ALGO=Ring', 2, 'ABBA', 'no_difference', md5((" +
        at + ")::text)) RETURNING id");
    db.Scalar(
        "INSERT INTO ras_snapshots (cluster, job_id, taken_at, report_format, health, "
        "communicators) VALUES ('lab', 'job-" +
        std::string(age) + "', " + at + ", 'json', 'healthy', '[]') RETURNING id");
    db.Scalar(
        "INSERT INTO ras_job_verdicts (cluster, job_id, first_taken_at, judged_at, snapshots, "
        "health, stuck, verdict) VALUES ('lab', 'job-" +
        std::string(age) + "', " + at + ", " + at + ", 1, 'healthy', false, '{}') RETURNING 1");
    db.Scalar(
        "INSERT INTO ras_events (cluster, job_id, received_at, event, stream_format) VALUES "
        "('lab', 'job-" +
        std::string(age) + "', " + at + ", 'PEER_DEAD', 'json') RETURNING id");
  }
  db.Scalar(
      "INSERT INTO locate_suspects (verdict_id, rank, kind, name, score) SELECT id, 1, "
      "'node', 'n1', 5 FROM locate_verdicts RETURNING 1");
  CommandOutput dry = Fabtrack("db prune --older-than 400d", db);
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_NE(dry.out.find("locate verdicts       1\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("A/B comparisons       1\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("RAS snapshots         1\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("RAS job verdicts      1\n"), std::string::npos) << dry.out;
  EXPECT_NE(dry.out.find("RAS events            1\n"), std::string::npos) << dry.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM locate_verdicts"), "2");
  CommandOutput wet = Fabtrack("db prune --older-than 400d --yes", db);
  ASSERT_EQ(wet.exit_code, 0) << wet.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM locate_verdicts WHERE located_at > now() - interval "
                      "'2 days'"),
            "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM locate_verdicts"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM locate_suspects"), "1");
  EXPECT_EQ(db.Scalar("SELECT string_agg(ab_id, ',') FROM ab_comparisons"), "ab-1 day");
  EXPECT_EQ(db.Scalar("SELECT string_agg(job_id, ',') FROM ras_snapshots"), "job-1 day");
  EXPECT_EQ(db.Scalar("SELECT string_agg(job_id, ',') FROM ras_job_verdicts"), "job-1 day");
  EXPECT_EQ(db.Scalar("SELECT string_agg(job_id, ',') FROM ras_events"), "job-1 day");
}

TEST(RunsRetention, PruneRejectsAPeriodItCannotRead) {
  TestDatabase db;
  for (const char* bad : {"400", "d", "-3d", "4y", "0d"}) {
    CommandOutput r = Fabtrack(std::string("db prune --older-than ") + bad, db);
    EXPECT_EQ(r.exit_code, 2) << bad;
    EXPECT_NE(r.err.find("400d, 8w, 36h"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace fabtrack
