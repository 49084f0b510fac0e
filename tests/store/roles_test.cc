// Least privilege (schema/004_roles.sql): a collector's role inserts what it
// measures and nothing else, a reader only selects, the analyzer writes only
// findings. Checked by connecting as login roles that are members of each.
#include <gtest/gtest.h>

#include "core/content_hash.h"
#include "store/locate_store.h"
#include "store/port_writer.h"
#include "store/ras_store.h"
#include "store/run_writer.h"
#include "store/snapshot_deltas.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

// A login role in `group` for this test database, dropped afterwards.
class LoginRole {
 public:
  LoginRole(TestDatabase& db, const std::string& group) : db_(db) {
    name_ = "t_" + group.substr(9) + "_" + db.name();
    pqxx::nontransaction admin(db.connection());
    admin.exec("CREATE ROLE " + admin.quote_name(name_) + " LOGIN IN ROLE " +
               admin.quote_name(group));
    connection_ = std::make_unique<pqxx::connection>(db.conninfo() + " user=" + name_);
  }
  ~LoginRole() {
    connection_.reset();
    pqxx::nontransaction admin(db_.connection());
    admin.exec("DROP OWNED BY " + admin.quote_name(name_));
    admin.exec("DROP ROLE " + admin.quote_name(name_));
  }
  pqxx::connection& connection() { return *connection_; }

  // Runs `sql` in its own transaction: "" on success, "42501" when refused
  // for lack of privilege (libpqxx 6.4 maps that SQLSTATE to its own
  // exception but does not always fill sqlstate()), else the error.
  std::string Try(const std::string& sql) {
    try {
      pqxx::work txn(*connection_);
      txn.exec(sql);
      txn.commit();
      return "";
    } catch (const pqxx::insufficient_privilege&) {
      return "42501";
    } catch (const pqxx::sql_error& e) {
      return e.sqlstate().empty() ? std::string("error: ") + e.what() : e.sqlstate();
    }
  }

 private:
  TestDatabase& db_;
  std::string name_;
  std::unique_ptr<pqxx::connection> connection_;
};

RunRecord SmallRun(const std::string& cluster, const std::string& host) {
  RunRecord run;
  run.cluster = cluster;
  run.started_at = "2026-11-30T02:00:00Z";
  run.source = "nccl-tests";
  run.hosts = {host};
  run.content_hash = Sha256Hex(cluster + host);
  SizeRow row;
  row.size_bytes = 1024;
  row.oop = Measurement{10.0, 0.1, 0.1, 0, std::nullopt};
  run.results = {{row, {}}};
  return run;
}

constexpr const char* kInsufficientPrivilege = "42501";

TEST(RolesTest, WriterInsertsButCannotDeleteUpdateOrDrop) {
  TestDatabase db;
  LoginRole writer(db, "fabtrack_writer");
  {
    pqxx::work txn(writer.connection());
    WriteRunResult r = WriteRun(txn, SmallRun("c1", "gpu-01"));
    EXPECT_TRUE(r.inserted);
    HostPorts host;
    host.host = "gpu-01";
    PortSample port;
    port.device = "mlx5_0";
    port.port = 1;
    port.counters = {{"symbol_error", 3}};
    host.ports = {port};
    // Creates the month's partition through the SECURITY DEFINER function.
    EXPECT_EQ(WriteHostSample(txn, "c1", host, "2031-05-01T00:00:00Z", r.run_id, "snapshot"), 1u);
    txn.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT to_regclass('port_counter_samples_203105') IS NOT NULL"), "t");
  EXPECT_EQ(writer.Try("DELETE FROM runs"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("DELETE FROM port_counter_samples"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("TRUNCATE run_results"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("UPDATE run_results SET oop_busbw_gbps = 999"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("UPDATE runs SET cluster = 'other'"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("DROP TABLE runs"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("CREATE TABLE evil (x int)"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("INSERT INTO findings (cluster, kind, severity, subject, message, "
                       "first_seen, last_seen) VALUES ('c1', 'k', 'info', 's', 'm', now(), now())"),
            kInsufficientPrivilege);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
}

// `fabtrack import` runs as a collector: two snapshots of a port get their
// window, a snapshot stored again or between them replaces windows through
// the owner's function, and the writer still cannot delete deltas itself.
TEST(RolesTest, WriterStoresSnapshotWindowsButCannotDeleteDeltas) {
  TestDatabase db;
  LoginRole writer(db, "fabtrack_writer");
  auto snapshot = [&](const std::string& at, uint64_t symbol_errors) {
    pqxx::work txn(writer.connection());
    HostPorts host;
    host.host = "gpu-01";
    PortSample port;
    port.device = "mlx5_0";
    port.port = 1;
    port.counters = {{"symbol_error", symbol_errors}};
    host.ports = {port};
    WriteHostSample(txn, "c1", host, at, std::nullopt, "snapshot");
    const size_t windows = WriteSnapshotPortDeltas(txn, "c1", host, at);
    txn.commit();
    return windows;
  };
  EXPECT_EQ(snapshot("2031-05-01T02:00:00Z", 3), 0u);
  EXPECT_EQ(snapshot("2031-05-01T02:10:00Z", 53), 1u);
  EXPECT_EQ(snapshot("2031-05-01T02:05:00Z", 13), 2u);  // splits 02:00-02:10
  EXPECT_EQ(snapshot("2031-05-01T02:05:00Z", 13), 2u);  // again: the same rows
  EXPECT_EQ(db.Scalar("SELECT string_agg(delta::text, ',' ORDER BY window_end) FROM "
                      "run_port_deltas WHERE counter = 'symbol_error'"),
            "10,40");
  EXPECT_EQ(writer.Try("DELETE FROM run_port_deltas"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("UPDATE run_port_deltas SET delta = 0"), kInsufficientPrivilege);
}

// `fabtrack locate --cluster` runs as a collector: it stores its verdict and
// reads which runs the night's analysis flagged, and changes nothing else.
TEST(RolesTest, WriterStoresLocateVerdictsAndReadsFlaggedRuns) {
  TestDatabase db;
  LoginRole writer(db, "fabtrack_writer");
  pqxx::work txn(writer.connection());
  const int64_t run = WriteRun(txn, SmallRun("c1", "gpu-01")).run_id;
  LocateRecord r;
  r.cluster = "c1";
  r.located_at = "2031-05-01T00:00:00Z";
  r.hosts = {"gpu-01", "gpu-02"};
  r.verdict.suspects = {{.kind = "node", .name = "gpu-02", .score = 7, .evidence = {"slow"}}};
  r.run_ids = {run};
  RecordWrite w = WriteLocateVerdict(txn, r);
  EXPECT_TRUE(w.inserted);
  EXPECT_EQ(w.linked_runs, 1);
  EXPECT_TRUE(ReadFlaggedRuns(txn, "c1", "2000-01-01T00:00:00Z", {"busbw_regression"}).empty());
  txn.commit();
  EXPECT_EQ(writer.Try("DELETE FROM locate_verdicts"), kInsufficientPrivilege);
  EXPECT_EQ(writer.Try("UPDATE locate_suspects SET name = 'x'"), kInsufficientPrivilege);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM locate_suspects"), "1");
}

TEST(RolesTest, WriterStoresRasWatchesAndReadsTheJobsPorts) {
  TestDatabase db;
  LoginRole writer(db, "fabtrack_writer");
  pqxx::work txn(writer.connection());
  RasSnapshot s;
  s.cluster = "c1";
  s.job_id = "4242";
  s.taken_at = "2031-05-01T00:00:00Z";
  s.report_format = "json";
  s.health = "healthy";
  WriteRasSnapshot(txn, s);
  WriteRasSnapshot(txn, s);  // the same time again: replaced (needs UPDATE)
  RasWatchVerdict v;
  v.snapshots = 1;
  v.first_taken_at = v.last_taken_at = s.taken_at;
  WriteRasJobVerdict(txn, "c1", "4242", v);
  WriteRasJobVerdict(txn, "c1", "4242", v);
  EXPECT_TRUE(ReadHostPortReadings(txn, "c1", {"gpu-01"}, s.taken_at, s.taken_at).empty());
  txn.commit();
  EXPECT_EQ(writer.Try("DELETE FROM ras_snapshots"), kInsufficientPrivilege);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ras_snapshots"), "1");
}

TEST(RolesTest, ReaderOnlySelects) {
  TestDatabase db;
  {
    pqxx::work txn(db.connection());
    WriteRun(txn, SmallRun("c1", "gpu-01"));
    txn.commit();
  }
  LoginRole reader(db, "fabtrack_reader");
  {
    pqxx::work txn(reader.connection());
    EXPECT_EQ(txn.exec1("SELECT current_user || ' ' || pg_has_role(current_user, "
                        "'fabtrack_reader', 'member') || ' ' || has_table_privilege('clusters', "
                        "'INSERT')")[0]
                  .as<std::string>(),
              "t_reader_" + db.name() + " true false");
  }
  EXPECT_EQ(reader.Try("SELECT count(*) FROM runs JOIN run_results ON id = run_id"), "");
  EXPECT_EQ(reader.Try("SELECT count(*) FROM findings"), "");
  EXPECT_EQ(reader.Try("INSERT INTO clusters (name) VALUES ('x')"), kInsufficientPrivilege);
  EXPECT_EQ(reader.Try("DELETE FROM runs"), kInsufficientPrivilege);
  EXPECT_EQ(reader.Try("SELECT count(*) FROM analysis_run_summaries"), "");
  EXPECT_EQ(reader.Try("DELETE FROM analysis_run_summaries"), kInsufficientPrivilege);
  EXPECT_EQ(reader.Try("SELECT fabtrack_ensure_counter_partitions(now()::date, now()::date)"),
            kInsufficientPrivilege);
}

TEST(RolesTest, AnalyzerWritesFindingsOnly) {
  TestDatabase db;
  LoginRole analyzer(db, "fabtrack_analyzer");
  {
    pqxx::work txn(db.connection());
    WriteRun(txn, SmallRun("c1", "gpu-01"));
    txn.commit();
  }
  EXPECT_EQ(analyzer.Try("INSERT INTO findings (cluster, kind, severity, subject, message, "
                         "first_seen, last_seen) VALUES ('c1', 'k', 'info', 's', 'm', now(), "
                         "now())"),
            "");
  EXPECT_EQ(analyzer.Try("UPDATE findings SET state = 'resolved', resolved_at = now()"), "");
  EXPECT_EQ(analyzer.Try("DELETE FROM findings"), kInsufficientPrivilege);
  EXPECT_EQ(analyzer.Try("UPDATE runs SET status = 'failed'"), kInsufficientPrivilege);
  // ...and the summarised history it keeps (schema 015), replaced whole
  // after the full history was read.
  EXPECT_EQ(analyzer.Try("INSERT INTO analysis_run_summaries (run_id, summary) "
                         "SELECT id, '{\"k\": [1, null]}' FROM runs"),
            "");
  EXPECT_EQ(analyzer.Try("INSERT INTO analysis_summary_state (cluster, through_started_at, "
                         "runs_digest) VALUES ('c1', now(), 'd') ON CONFLICT (cluster) DO UPDATE "
                         "SET runs_digest = EXCLUDED.runs_digest"),
            "");
  EXPECT_EQ(analyzer.Try("DELETE FROM analysis_run_summaries"), "");
}

// Host names, tags and labels are data: bound as parameters or streamed.
TEST(RolesTest, HostileNamesAreStoredVerbatim) {
  TestDatabase db;
  const std::string hostile = "gpu'); DROP TABLE runs; --\"\\\n\t$1 {x}";
  RunRecord run = SmallRun("c'1; DROP TABLE findings", hostile);
  run.tags = {{"k'ey", "va\"l;ue"}};
  run.sweep_id = "$$; DELETE FROM runs; $$";
  {
    pqxx::work txn(db.connection());
    WriteRun(txn, run);
    txn.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT hosts[1] FROM runs"), hostile);
  EXPECT_EQ(db.Scalar("SELECT cluster FROM runs"), "c'1; DROP TABLE findings");
  EXPECT_EQ(db.Scalar("SELECT tags->>'k''ey' FROM runs"), "va\"l;ue");
  EXPECT_EQ(db.Scalar("SELECT sweep_id FROM runs"), "$$; DELETE FROM runs; $$");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM findings"), "0");
}

}  // namespace
}  // namespace fabtrack::store
