// Runs the fabtrack binary as a user would and checks its output, exit codes
// and what lands in a real PostgreSQL database.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <pqxx/pqxx>

#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::TestDatabase;

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += (c == '\'') ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// The spool of the commands run against `db`: one per database, so that a
// batch one test spooled is never replayed into another test's database.
std::string SpoolDirFor(const std::string& db) {
  return ::testing::TempDir() + "/fabtrack_spool_" +
         std::to_string(std::hash<std::string>{}(db.empty() ? std::to_string(getpid()) : db));
}

// Runs `fabtrack <args>` with FABTRACK_DB set to `db` (empty: unset) and
// the spool in `spool_dir` (empty: one of `db`'s own).
CommandResult Fabtrack(const std::string& args, const std::string& db,
                       const std::string& spool_dir = "") {
  std::string dir = ::testing::TempDir();
  std::string out = dir + "/fabtrack_out_" + std::to_string(getpid());
  std::string err = dir + "/fabtrack_err_" + std::to_string(getpid());
  std::string env = (db.empty() ? "env -u FABTRACK_DB " : "env FABTRACK_DB=" + Quote(db) + " ") +
                    "FABTRACK_SPOOL_DIR=" + Quote(spool_dir.empty() ? SpoolDirFor(db) : spool_dir) +
                    " ";
  std::string cmd = env + FABTRACK_CLI + std::string(" ") + args + " >" + out + " 2>" + err;
  int status = std::system(cmd.c_str());
  CommandResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadAll(out), ReadAll(err)};
  std::filesystem::remove(out);
  std::filesystem::remove(err);
  return r;
}

std::string Fixture(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/cli/" + name;
}

TEST(CliTest, ParsePrintsTheDocumentedJsonShape) {
  CommandResult r = Fabtrack("parse --format json " + Fixture("allreduce_2node_ib.txt"), "");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_array());
  ASSERT_EQ(j.size(), 1u);
  const auto& f = j[0];
  EXPECT_EQ(f["nccl_version"], "2.27.4");
  EXPECT_EQ(f["network"], "IB");
  EXPECT_EQ(f["transports"], nlohmann::json({"P2P/IPC", "NET/IB"}));
  EXPECT_EQ(f["gdrdma"], true);
  ASSERT_EQ(f["net_devices"].size(), 4u);  // two NICs on each of two hosts
  EXPECT_EQ(f["net_devices"][0]["name"], "mlx5_0");
  EXPECT_EQ(f["net_devices"][0]["port"], 1);
  EXPECT_EQ(f["net_devices"][0]["link"], "IB");
  EXPECT_EQ(f["net_devices"][0]["sharp"], false);
  ASSERT_EQ(f["tests"].size(), 1u);
  const auto& t = f["tests"][0];
  EXPECT_EQ(t["collective"], "all_reduce");
  EXPECT_EQ(t["ranks"], 4);
  EXPECT_EQ(t["hosts"], nlohmann::json({"node-a1", "node-a2"}));
  EXPECT_EQ(t["avg_busbw"], 12.4325);
  EXPECT_EQ(t["oob_ok"], true);
  EXPECT_EQ(t["complete"], true);
  ASSERT_EQ(t["rows"].size(), 4u);
  const auto& row = t["rows"][3];
  EXPECT_EQ(row["size_bytes"], 16777216);
  EXPECT_EQ(row["count"], 4194304);
  EXPECT_EQ(row["type"], "float");
  EXPECT_EQ(row["redop"], "sum");
  EXPECT_EQ(row["root"], -1);
  EXPECT_EQ(row["oop"]["time_us"], 760.4);
  EXPECT_EQ(row["oop"]["busbw"], 33.10);
  EXPECT_EQ(row["ip"]["algbw"], 22.11);
  EXPECT_EQ(row["ip"]["wrong"], 0);
  EXPECT_TRUE(f["errors"].empty());
}

TEST(CliTest, ParseOfUnusableFileExitsNonZeroWithFileName) {
  CommandResult r = Fabtrack("parse " + Fixture("not_a_result.txt"), "");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not_a_result.txt"), std::string::npos) << r.err;
  // Still prints its JSON entry, with no tests.
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j[0]["tests"].empty());
}

TEST(CliTest, IngestStoresOnceAndSaysSo) {
  TestDatabase db;
  std::string file = Fixture("allreduce_2node_ib.txt");
  CommandResult first = Fabtrack(
      "ingest " + file + " --cluster lab --at 2026-11-30T02:00:00Z --tag night=42 --tag rack=r1",
      db.conninfo());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.out.find("stored run"), std::string::npos) << first.out;
  CommandResult second = Fabtrack("ingest " + file + " --cluster lab", db.conninfo());
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.out.find("already stored"), std::string::npos) << second.out;

  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "4");
  EXPECT_EQ(db.Scalar("SELECT nodes || '/' || ranks || '/' || ranks_per_node FROM runs"), "2/4/2");
  EXPECT_EQ(db.Scalar("SELECT collective || ' ' || network || ' ' || gdrdma FROM runs"),
            "all_reduce IB true");
  EXPECT_EQ(db.Scalar("SELECT started_at = '2026-11-30T02:00:00Z' FROM runs"), "t");
  EXPECT_EQ(db.Scalar("SELECT (tags->>'night') || (tags->>'rack') FROM runs"), "42r1");
  EXPECT_EQ(db.Scalar("SELECT nccl_version FROM runs"), "2.27.4");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM transport_observations WHERE family = 'NET/IB'"), "4");
  EXPECT_EQ(db.Scalar("SELECT string_agg(DISTINCT device, ',') FROM rank_nics"), "mlx5_0,mlx5_1");
}

TEST(CliTest, IngestDefaultsToFileTimeAndHostCount) {
  TestDatabase db;
  std::string copy = ::testing::TempDir() + "/ingest_mtime_" + std::to_string(getpid()) + ".txt";
  std::filesystem::copy_file(Fixture("allreduce_2node_ib.txt"), copy,
                             std::filesystem::copy_options::overwrite_existing);
  ASSERT_EQ(std::system(("touch -d '2026-10-01 03:04:05 UTC' " + copy).c_str()), 0);
  CommandResult r = Fabtrack("ingest " + copy + " --cluster lab --nodes 3", db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT started_at = '2026-10-01 03:04:05+00' FROM runs"), "t");
  EXPECT_EQ(db.Scalar("SELECT nodes FROM runs"), "3");
  std::filesystem::remove(copy);
}

TEST(CliTest, UnparseableFileStoresNothingAndNamesFileAndLine) {
  TestDatabase db;
  CommandResult r = Fabtrack("ingest " + Fixture("not_a_result.txt") + " " +
                                 Fixture("allreduce_2node_ib.txt") + " --cluster lab",
                             db.conninfo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not_a_result.txt:1:"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("not stored"), std::string::npos) << r.err;
  // The good file in the same call is still stored.
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE source_file LIKE '%not_a_result%'"), "0");
}

TEST(CliTest, BadFlagsAreUsageErrors) {
  TestDatabase db;
  EXPECT_EQ(
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab --at yesterday",
               db.conninfo())
          .exit_code,
      2);
  EXPECT_EQ(Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab --tag novalue",
                     db.conninfo())
                .exit_code,
            2);
  EXPECT_EQ(Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt"), db.conninfo()).exit_code, 2);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

// A database whose schema is behind cannot take the run: a misconfiguration,
// not an outage (exit 3, the cause and the fix said), but the run waits in
// the spool and is stored once the schema owner migrates.
TEST(CliTest, OldSchemaSpoolsUntilMigrated) {
  TestDatabase db(/*migrate=*/false);
  CommandResult r =
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab", db.conninfo());
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("fabtrack db migrate"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept in the spool"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(1 batch(es) for"), std::string::npos) << r.err;
  CommandResult m = Fabtrack("db migrate", db.conninfo());
  ASSERT_EQ(m.exit_code, 0) << m.err;
  EXPECT_NE(m.out.find("applied 001_initial"), std::string::npos) << m.out;
  CommandResult again = Fabtrack("db migrate", db.conninfo());
  EXPECT_NE(again.out.find("nothing to do"), std::string::npos) << again.out;
  CommandResult after =
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab", db.conninfo());
  EXPECT_EQ(after.exit_code, 0);
  EXPECT_NE(after.err.find("replayed 1 spooled batch"), std::string::npos) << after.err;
  EXPECT_NE(after.out.find("already stored as run"), std::string::npos) << after.out;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
}

int CountBatches(const std::string& dir) {
  int n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    n += e.path().extension() == ".batch";
  }
  return n;
}

// Issue 17: a batch spooled for database A is never written into B, by a
// read-only command or an ingest against B; once A takes connections again
// one replay stores it in A, exactly once.
TEST(CliTest, SpoolIsBoundToItsDatabase) {
  TestDatabase a, b;
  const std::string spool = ::testing::TempDir() + "/fabtrack_bound_spool_" + a.name();
  std::filesystem::remove_all(spool);
  // A stops taking connections (its open sessions stay): an outage.
  b.Scalar("ALTER DATABASE " + a.name() + " ALLOW_CONNECTIONS false");
  CommandResult down = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster only-a",
                                a.conninfo(), spool);
  EXPECT_EQ(down.exit_code, 0) << down.err;  // an outage is waited out, not a failure
  // One warning line, as the README says: the target, the cause, how many
  // batches and where.
  EXPECT_EQ(down.err.rfind("fabtrack: warning: ", 0), 0u) << down.err;
  EXPECT_EQ(down.err.find('\n'), down.err.size() - 1) << down.err;
  EXPECT_NE(down.err.find("1 batch(es) spooled in " + spool), std::string::npos) << down.err;
  EXPECT_EQ(down.out, "") << "nothing stored, nothing to list";
  ASSERT_EQ(CountBatches(spool), 1);

  CommandResult status = Fabtrack("spool status", b.conninfo(), spool);
  EXPECT_EQ(status.exit_code, 0);
  EXPECT_NE(status.out.find("/" + a.name() + ": 1 batch(es)"), std::string::npos) << status.out;

  CommandResult list = Fabtrack("runs list", b.conninfo(), spool);
  EXPECT_EQ(list.exit_code, 0) << list.err;
  CommandResult own = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster only-b",
                               b.conninfo(), spool);
  EXPECT_EQ(own.exit_code, 0) << own.err;
  EXPECT_EQ(b.Scalar("SELECT count(*) FROM runs WHERE cluster = 'only-a'"), "0");
  EXPECT_EQ(b.Scalar("SELECT count(*) FROM runs WHERE cluster = 'only-b'"), "1");
  EXPECT_EQ(CountBatches(spool), 1) << "B's commands left A's batch alone";

  b.Scalar("ALTER DATABASE " + a.name() + " ALLOW_CONNECTIONS true");
  CommandResult replay = Fabtrack("spool replay", a.conninfo(), spool);
  EXPECT_EQ(replay.exit_code, 0) << replay.err;
  EXPECT_EQ(a.Scalar("SELECT count(*) FROM runs WHERE cluster = 'only-a'"), "1");
  EXPECT_EQ(CountBatches(spool), 0);
  CommandResult again = Fabtrack("spool replay", a.conninfo(), spool);
  EXPECT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(a.Scalar("SELECT count(*) FROM runs"), "1");
}

// A database that does not exist is a misconfiguration: the run is kept in
// the spool, and the command fails naming the cause and the fix.
TEST(CliTest, MissingDatabaseKeepsTheRunAndFails) {
  TestDatabase a;
  const std::string spool = ::testing::TempDir() + "/fabtrack_missing_db_" + a.name();
  std::filesystem::remove_all(spool);
  std::string conninfo = a.conninfo();
  conninfo.replace(conninfo.find("dbname=" + a.name()), 7 + a.name().size(),
                   "dbname=" + a.name() + "_nowhere");
  CommandResult r =
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab", conninfo, spool);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept in the spool"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("create the database"), std::string::npos) << r.err;
  EXPECT_EQ(CountBatches(spool), 1);
  // `spool drop` needs --yes; then the batch is gone.
  std::string name;
  for (const auto& e : std::filesystem::directory_iterator(spool)) {
    if (e.path().extension() == ".batch") name = e.path().filename().string();
  }
  EXPECT_EQ(Fabtrack("spool drop " + name.substr(0, 24), conninfo, spool).exit_code, 2);
  EXPECT_EQ(CountBatches(spool), 1);
  CommandResult drop = Fabtrack("spool drop " + name.substr(0, 24) + " --yes", conninfo, spool);
  EXPECT_EQ(drop.exit_code, 0) << drop.err;
  EXPECT_EQ(CountBatches(spool), 0);
}

// A role that may read but not write is a misconfiguration too: the run is
// kept in the spool (the data is fine), the command fails naming the cause.
TEST(CliTest, RoleWithoutInsertKeepsTheRunAndFails) {
  TestDatabase db;
  const std::string role = db.name() + "_reader";
  db.Scalar("CREATE ROLE " + role + " LOGIN IN ROLE fabtrack_reader");
  const std::string spool = ::testing::TempDir() + "/fabtrack_reader_" + db.name();
  std::filesystem::remove_all(spool);
  CommandResult r = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab",
                             db.conninfo() + " user=" + role, spool);
  db.Scalar("DROP ROLE " + role);
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_NE(r.err.find("permission denied"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("kept in the spool"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("fabtrack_writer"), std::string::npos) << r.err;
  EXPECT_EQ(CountBatches(spool), 1);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

// A server that accepts and never answers: every command returns well
// within 30 s (the default connect_timeout is 10 s and is not retried), the
// ingest spooled and said why, the read failed naming the timeout.
TEST(CliTest, SilentServerCannotHangACommand) {
  int listener = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  ASSERT_EQ(listen(listener, 16), 0);  // the kernel completes handshakes; nobody answers
  socklen_t len = sizeof addr;
  getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len);
  const std::string conninfo =
      "host=127.0.0.1 port=" + std::to_string(ntohs(addr.sin_port)) + " dbname=x user=u";
  const std::string spool = ::testing::TempDir() + "/fabtrack_silent_" + std::to_string(getpid());
  std::filesystem::remove_all(spool);
  auto start = std::chrono::steady_clock::now();
  CommandResult ingest =
      Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab", conninfo, spool);
  double ingest_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  start = std::chrono::steady_clock::now();
  CommandResult list = Fabtrack("runs list", conninfo, spool);
  double list_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  close(listener);
  EXPECT_LT(ingest_s, 30);
  EXPECT_LT(list_s, 30);
  EXPECT_EQ(ingest.exit_code, 0) << ingest.err;
  EXPECT_NE(ingest.err.find("did not answer"), std::string::npos) << ingest.err;
  EXPECT_EQ(CountBatches(spool), 1);
  EXPECT_EQ(list.exit_code, 3) << list.err;
  EXPECT_NE(list.err.find("timeout expired"), std::string::npos) << list.err;
}

// A server that answers the connection and then stalls (here: the table is
// locked by another session) cannot hang a reading command: its statements
// are bounded by FABTRACK_STATEMENT_TIMEOUT (300 s by default).
TEST(CliTest, StalledReadIsBoundedByTheStatementTimeout) {
  TestDatabase db;
  pqxx::connection locker(db.conninfo());
  pqxx::work lock(locker);
  lock.exec0("LOCK TABLE runs IN ACCESS EXCLUSIVE MODE");
  setenv("FABTRACK_STATEMENT_TIMEOUT", "2", 1);
  const auto start = std::chrono::steady_clock::now();
  CommandResult list = Fabtrack("runs list", db.conninfo());
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  unsetenv("FABTRACK_STATEMENT_TIMEOUT");
  lock.abort();
  EXPECT_NE(list.exit_code, 0);
  EXPECT_LT(seconds, 20);
  EXPECT_NE(list.err.find("statement timeout"), std::string::npos) << list.err;
}

// Mistakes get a message that says what is accepted, before any database
// work (a bad --since used to surface as PostgreSQL's own error).
TEST(CliTest, BadCommandsAndOptionsSayWhatIsAccepted) {
  CommandResult typo = Fabtrack("ingets some.txt", "");
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find("did you mean 'ingest'"), std::string::npos) << typo.err;
  CommandResult since = Fabtrack("analyze --since garbage --db host=/nonexistent/socket", "");
  EXPECT_EQ(since.exit_code, 3);  // analyze's "could not analyze"
  EXPECT_NE(since.err.find("--since: garbage: not a time; use RFC 3339"), std::string::npos)
      << since.err;
  EXPECT_EQ(since.err.find("cannot connect"), std::string::npos) << "checked before connecting";
}

TEST(CliTest, PasswordsNeverReachTheOutput) {
  // Nothing listens on this socket directory: the connection fails.
  std::string conninfo = "host=/nonexistent/socket dbname=x user=u password=topsecret42";
  CommandResult r = Fabtrack("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster lab",
                             conninfo + " connect_timeout=2");
  EXPECT_EQ(r.exit_code, 0) << r.err;  // spooled for later
  EXPECT_NE(r.err.find("batch(es) spooled in"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find("topsecret42"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("topsecret42"), std::string::npos) << r.out;
  EXPECT_NE(r.err.find("~/.pgpass"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

TEST(CliTest, PerRankLogsJoinTheResultsFile) {
  TestDatabase db;
  CommandResult r = Fabtrack("ingest " + Fixture("allreduce_2node_results_only.txt") +
                                 " --nccl-log " + Fixture("ranklogs") + " --cluster lab",
                             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT network || ' ' || gdrdma || ' ' || nccl_version FROM runs"),
            "IB true 2.27.4");
  EXPECT_EQ(db.Scalar("SELECT array_to_string(transports, ',') FROM runs"), "P2P/IPC,NET/IB");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM transport_observations"), "6");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT host) FROM run_net_devices"), "2");
}

TEST(CliTest, UnusableNcclLogStopsEverything) {
  TestDatabase db;
  CommandResult r = Fabtrack("ingest " + Fixture("allreduce_2node_results_only.txt") +
                                 " --nccl-log " + Fixture("not_a_result.txt") + " --cluster lab",
                             db.conninfo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not_a_result.txt:1: --nccl-log"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

TEST(CliTest, LocalSweepStoresOneRunPerNodeCountWithOneSweepId) {
  TestDatabase db;
  CommandResult r =
      Fabtrack("sweep --nodes 1-3 --cluster lab --tag night=9 -- -b 8 -e 4K -f 8 -n 4 -w 1 -q",
               db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("3 of 3 runs stored"), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT string_agg(ranks::text, ',' ORDER BY ranks) FROM runs"), "1,2,3");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT sweep_id) FROM runs WHERE sweep_id IS NOT NULL"), "1");
  EXPECT_EQ(db.Scalar("SELECT bool_and(tags->>'night' = '9' AND status = 'complete') FROM runs"),
            "t");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "12");  // 8, 64, 512, 4K per run
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM latency_samples"), "96");
  // The node count it printed is the one stored (all on this host, said so),
  // and its temporary folder is gone.
  EXPECT_NE(r.out.find("== 3 node(s)"), std::string::npos) << r.out;
  EXPECT_EQ(db.Scalar("SELECT string_agg(nodes::text, ',' ORDER BY nodes) FROM runs"), "1,2,3");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs WHERE tags->>'local_sweep' = 'one host'"), "2");
  const std::string sweep_id = db.Scalar("SELECT min(sweep_id) FROM runs");
  EXPECT_FALSE(std::filesystem::exists(std::filesystem::temp_directory_path() /
                                       ("fabtrack-sweep-" + sweep_id)))
      << sweep_id;
}

TEST(CliTest, SweepRefusesBadNodeCountsAndHarnessFlags) {
  TestDatabase db;
  EXPECT_EQ(Fabtrack("sweep --nodes 0 --cluster lab", db.conninfo()).exit_code, 2);
  CommandResult bad = Fabtrack("sweep --nodes 1-3 --cluster lab -- -b 1M -e 1K", db.conninfo());
  // Refused by fabtrack-allreduce's own parser before the header or any rank.
  EXPECT_EQ(std::count(bad.out.begin(), bad.out.end(), '='), 0)
      << "no node count started: " << bad.out;
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("smaller than -b"), std::string::npos) << bad.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

// Nothing configured: the command starts the embedded server itself, says
// so, and works; `db status`/`db stop` see it.
TEST(CliTest, EmbeddedDatabaseStartsOnDemand) {
  std::string dir = "/tmp/fabtrack-cli-embedded-" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  // Unset FABTRACK_DB too: the test environment points it at the fixture.
  const std::string env =
      "env -u FABTRACK_DB -u PGHOST -u PGDATABASE -u PGSERVICE -u PGPORT -u PGUSER "
      "FABTRACK_DATA_DIR=" +
      dir + " ";
  auto run = [&](const std::string& args) {
    std::string out = dir + ".out", err = dir + ".err";
    int status = std::system(
        (env + FABTRACK_CLI + std::string(" ") + args + " >" + out + " 2>" + err + " </dev/null")
            .c_str());
    CommandResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadAll(out), ReadAll(err)};
    std::filesystem::remove(out);
    std::filesystem::remove(err);
    return r;
  };
  CommandResult first = run("ingest " + Fixture("allreduce_2node_ib.txt") + " --cluster solo");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("no database configured"), std::string::npos) << first.err;
  EXPECT_NE(first.err.find("created and started the embedded PostgreSQL in " + dir),
            std::string::npos)
      << first.err;
  CommandResult list = run("runs list --cluster solo --format json");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_EQ(nlohmann::json::parse(list.out).size(), 1u);
  EXPECT_EQ(list.err.find("started"), std::string::npos) << "already running: no notice";
  CommandResult status = run("db status");
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  EXPECT_NE(status.out.find("running"), std::string::npos);
  EXPECT_NE(status.out.find("schema: version "), std::string::npos) << status.out;
  EXPECT_EQ(status.out.find("db migrate"), std::string::npos)
      << "embedded is migrated: " << status.out;
  CommandResult stop = run("db stop");
  EXPECT_NE(stop.out.find("stopped"), std::string::npos) << stop.out;
  CommandResult after = run("db status");
  EXPECT_EQ(after.exit_code, 3);
  EXPECT_NE(after.out.find("stopped"), std::string::npos) << after.out;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

TEST(CliTest, HostfileSweepRunsRanksPerNode) {
  TestDatabase db;
  std::string hostfile = ::testing::TempDir() + "/hostfile_" + std::to_string(getpid());
  {
    std::ofstream out(hostfile);
    out << "# one node of the test machine\nlocalhost slots=4\n";
  }
  CommandResult r = Fabtrack("sweep --hostfile " + hostfile +
                                 " --nodes 1 --ranks-per-node 2 --cluster lab -- -b 8 -e 64 -f 8 "
                                 "-n 3 -w 1 -q",
                             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(db.Scalar("SELECT ranks || '/' || nodes || '/' || ranks_per_node FROM runs"), "2/1/2");
  // More nodes than the hostfile lists is refused before anything runs.
  CommandResult too_many = Fabtrack(
      "sweep --hostfile " + hostfile + " --nodes 1-2 --cluster lab -- -b 8 -e 8", db.conninfo());
  EXPECT_EQ(too_many.exit_code, 2);
  EXPECT_NE(too_many.err.find("hostfile lists 1"), std::string::npos) << too_many.err;
  std::filesystem::remove(hostfile);
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

// The sweep brackets each run with this host's port counters: a wrapper
// around fabtrack-allreduce moves two counters in a copied sysfs tree while
// the run is going, and the run must carry exactly those deltas.
TEST(CliTest, SweepAttachesPortCounterDeltasToTheRun) {
  TestDatabase db;
  std::string dir = ::testing::TempDir() + "/bracket_" + std::to_string(getpid());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  ASSERT_EQ(
      std::system(("cp -a " + std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/ndr_8hca " + dir + "/sys")
                      .c_str()),
      0);
  std::string counters = dir + "/sys/class/infiniband/mlx5_0/ports/1/counters/";
  uint64_t xmit_before = std::stoull(ReadAll(counters + "port_xmit_data"));
  uint64_t errors_before = std::stoull(ReadAll(counters + "symbol_error"));
  std::string wrapper = dir + "/allreduce-wrapper.sh";
  {
    std::ofstream w(wrapper);
    w << "#!/bin/sh\n"
      << "echo " << xmit_before + 250000 << " > " << counters << "port_xmit_data\n"
      << "echo " << errors_before + 3 << " > " << counters << "symbol_error\n"
      << "exec " << FABTRACK_ALLREDUCE << " \"$@\"\n";
  }
  std::filesystem::permissions(wrapper, std::filesystem::perms::owner_all);
  CommandResult r = Fabtrack("sweep --nodes 1 --cluster lab --allreduce " + wrapper + " --sysfs " +
                                 dir + "/sys -- -b 8 -e 8 -n 2 -w 1 -q",
                             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto delta = [&](const std::string& counter) {
    return db.Scalar(
        "SELECT d.delta FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
        "WHERE p.device = 'mlx5_0' AND d.counter = '" +
        counter + "'");
  };
  EXPECT_EQ(delta("port_xmit_data"), "250000");
  EXPECT_EQ(delta("xmit_bytes"), "1000000");  // 4-octet words
  EXPECT_EQ(delta("symbol_error"), "3");
  EXPECT_EQ(delta("port_rcv_data"), "0");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT run_id) FROM run_port_deltas"), "1");
  EXPECT_EQ(db.Scalar("SELECT string_agg(DISTINCT phase, ',' ORDER BY phase) FROM "
                      "port_counter_samples WHERE run_id IS NOT NULL"),
            "after,before");
  std::filesystem::remove_all(dir);
}

// A real job's collectives (NCCL Inspector dump directory) stored once, bad
// files refused with file:line, and the job judged against the nightly
// benchmarks of its node count: 2 nodes x 8 GPUs, all_reduce 8 MiB at ~80
// GB/s where the lab's nccl-tests run measured ~134.
// Issue 16, end to end: a 2-node IB run that died of a transport retry
// error (the WARN completion line, then nccl-tests' "Test NCCL failure", no
// trailer) is CRITICAL on its first night, naming the host and HCA with the
// line, and its window renders as HTML.
TEST(CliTest, IbRetryExceededRunIsCriticalWithHostHcaAndLine) {
  TestDatabase db;
  CommandResult in = Fabtrack("ingest --cluster lab --at 2026-12-03T02:00:00Z " +
                                  Fixture("allreduce_2node_ib_retry_exceeded.txt"),
                              db.conninfo());
  ASSERT_EQ(in.exit_code, 0) << in.err;
  EXPECT_EQ(db.Scalar("SELECT string_agg(level || ':' || line || ':' || coalesce(host, '-'), ',' "
                      "ORDER BY seq) FROM run_log_events"),
            "warn:29:node-c2,test:33:node-c2");
  CommandResult r =
      Fabtrack("analyze --cluster lab --since 2026-12-03T00:00:00Z --format json", db.conninfo());
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;  // CRITICAL
  nlohmann::json report = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << r.out;
  std::string completion, failure;
  for (const nlohmann::json& f : report.at("findings")) {
    if (f.value("kind", "") == "ib_completion_error") completion = f.dump();
    if (f.value("kind", "") == "run_failure") failure = f.dump();
  }
  EXPECT_NE(completion.find("node-c2:mlx5_1"), std::string::npos) << r.out;
  EXPECT_NE(completion.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << completion;
  EXPECT_NE(completion.find("line 29"), std::string::npos) << completion;
  EXPECT_NE(failure.find("Test NCCL failure"), std::string::npos) << r.out;
  CommandResult html =
      Fabtrack("analyze --cluster lab --since 2026-12-03T00:00:00Z --format html", db.conninfo());
  EXPECT_EQ(html.exit_code, 2) << html.err;
  EXPECT_NE(html.out.find("</html>"), std::string::npos);

  // `runs show`: the run in full, with the lines it kept and its findings.
  const std::string id = db.Scalar("SELECT max(id) FROM runs");
  CommandResult show = Fabtrack("runs show " + id, db.conninfo());
  ASSERT_EQ(show.exit_code, 0) << show.err;
  EXPECT_NE(show.out.find("partial"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("node_count_source"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("warn line 29 node-c2: NET/IB : Got completion"), std::string::npos)
      << show.out;
  EXPECT_NE(show.out.find("critical  ib_completion_error"), std::string::npos) << show.out;
  CommandResult json = Fabtrack("runs show " + id + " --format json", db.conninfo());
  ASSERT_EQ(json.exit_code, 0) << json.err;
  nlohmann::json doc = nlohmann::json::parse(json.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << json.out;
  EXPECT_EQ(doc["results"].size(), 2u);
  EXPECT_EQ(doc["log_events"].size(), 2u);
  EXPECT_EQ(doc["run"]["nodes"], 2);
  EXPECT_EQ(Fabtrack("runs show 987654321", db.conninfo()).exit_code, 1);
}

TEST(CliTest, InspectorJobIsStoredOnceAndJudgedAgainstTheNightlyBenchmarks) {
  TestDatabase db;
  const std::string job = std::string(FABTRACK_FIXTURE_DIR) + "/inspector/nccl-inspector-48213";
  const std::string nightly =
      std::string(FABTRACK_SOURCE_DIR) + "/examples/lab-cluster/2026-11-28_allreduce_2node.txt";
  ASSERT_EQ(
      Fabtrack("ingest " + nightly + " --cluster lab --at 2025-10-15T02:00:00Z", db.conninfo())
          .exit_code,
      0);
  CommandResult first = Fabtrack("inspector ingest " + job + " --cluster lab", db.conninfo());
  ASSERT_EQ(first.exit_code, 0) << first.err;
  EXPECT_NE(first.err.find("stored job 48213 (160 records in 5 collective/size groups, 16 ranks "
                           "on 2 nodes)"),
            std::string::npos)
      << first.err;
  CommandResult again = Fabtrack("inspector ingest " + job + " --cluster lab", db.conninfo());
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.err.find("already stored"), std::string::npos) << again.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM inspector_jobs"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM inspector_collectives"), "5");
  EXPECT_EQ(db.Scalar("SELECT DISTINCT slowest_rank || '@' || slowest_rank_host FROM "
                      "inspector_collectives"),
            "11@gpu-h100-a018");

  CommandResult bad = Fabtrack("inspector ingest " + std::string(FABTRACK_FIXTURE_DIR) +
                                   "/inspector/errors --cluster lab --job broken",
                               db.conninfo());
  EXPECT_EQ(bad.exit_code, 1);
  EXPECT_NE(bad.err.find("gpu-h100-a017-pid73104.log:4: not a record"), std::string::npos)
      << bad.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM inspector_jobs"), "1") << "nothing of a bad job";

  CommandResult analyze =
      Fabtrack("analyze --cluster lab --since 2025-10-16T00:00:00Z --format json", db.conninfo());
  EXPECT_EQ(analyze.exit_code, 1) << analyze.out << analyze.err;
  nlohmann::json report = nlohmann::json::parse(analyze.out);
  EXPECT_EQ(report["judged_jobs"], 1);
  bool found = false;
  for (const auto& f : report["findings"]) {
    if (f["kind"] != "job_fabric") continue;
    found = true;
    EXPECT_EQ(f["subject"], "job 48213");
    EXPECT_EQ(f["host"], "gpu-h100-a018");
    EXPECT_EQ(f["size_bytes"], 8388608);
    EXPECT_NE(f["message"].get<std::string>().find("on 2 nodes (-40%, median of 1 runs)"),
              std::string::npos)
        << f["message"];
  }
  EXPECT_TRUE(found) << analyze.out;
}

}  // namespace
}  // namespace fabtrack
