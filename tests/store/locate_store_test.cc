// `fabtrack locate --cluster`'s verdicts in PostgreSQL (schema 011): a record
// with every field filled goes in and comes back equal (its links are the
// runs that exist in its cluster), a replay of the same record is a no-op,
// the spool keeps it across an outage, the night's flagged runs are the
// open findings of the trigger kinds, and the analyzer turns a stored
// verdict into a locate_suspect finding the HTML report shows in words.
#include "store/locate_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>

#include "analyzer/analyze.h"
#include "analyzer/report/html_report.h"
#include "core/content_hash.h"
#include "core/locate_json.h"
#include "store/analysis_reader.h"
#include "store/findings_writer.h"
#include "store/run_writer.h"
#include "store/spool.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

int64_t StoreRun(TestDatabase& db, const std::string& cluster, const std::string& at,
                 const std::optional<std::string>& sweep) {
  RunRecord run;
  run.cluster = cluster;
  run.started_at = at;
  run.source = "fabtrack-allreduce";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.nodes = 2;
  run.ranks = 2;
  run.ranks_per_node = 1;
  run.hosts = {"n1", "n2"};
  run.sweep_id = sweep;
  run.content_hash = Sha256Hex(cluster + at);
  SizeRow big;
  big.size_bytes = 1 << 26;
  big.type = "float";
  big.oop = Measurement{1000, 60, 40, 0, std::nullopt};
  run.results = {{big, {}}};
  pqxx::work txn(db.connection());
  const int64_t id = WriteRun(txn, run).run_id;
  txn.commit();
  return id;
}

// Every field set, text that needs quoting in arrays.
LocateRecord FullRecord() {
  LocateRecord r;
  r.cluster = "lab";
  r.located_at = "2026-12-04T03:10:00.250000Z";
  r.hosts = {"n1", "n2", "n3", "n4 \"odd\""};
  r.verdict.suspects = {
      {.kind = "uplink",
       .name = "leaf1-spine",
       .score = 8.25,
       .evidence = {"n1->n3 busbw 0.31x of healthy", "n2->n4 busbw 0.35x, {braces}"}},
      {.kind = "node", .name = "n2", .score = 3.5, .evidence = {"n2 latency 1.9x"}}};
  r.verdict.settled = true;
  r.verdict.rounds = 4;
  r.verdict.busbw_spread = 0.04;
  r.verdict.latency_spread = 0.07;
  r.seconds = 37.5;
  r.probes = 24;
  r.exit_status = 2;
  r.budget_spent = true;
  r.sweep_id = "sweep-1";
  return r;
}

TEST(LocateStore, WritesAndReadsBackEveryField) {
  TestDatabase db;
  const int64_t a = StoreRun(db, "lab", "2026-12-04T02:00:00Z", "sweep-1");
  const int64_t b = StoreRun(db, "lab", "2026-12-04T02:05:00Z", "sweep-1");
  const int64_t c = StoreRun(db, "lab", "2026-12-04T02:10:00Z", std::nullopt);
  const int64_t other = StoreRun(db, "elsewhere", "2026-12-04T02:00:00Z", std::nullopt);
  LocateRecord r = FullRecord();
  r.run_ids = {c, other, 999999};  // another cluster's run and a missing one are skipped
  RecordWrite w;
  {
    pqxx::work txn(db.connection());
    w = WriteLocateVerdict(txn, r);
    txn.commit();
  }
  EXPECT_TRUE(w.inserted);
  EXPECT_EQ(w.linked_runs, 3);  // the sweep's two and c
  pqxx::work txn(db.connection());
  std::vector<StoredLocate> back = ReadLocateVerdicts(txn, "lab", 10);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].id, w.id);
  LocateRecord want = r;
  want.run_ids = {a, b, c};
  EXPECT_EQ(back[0].record, want) << LocateRecordToJson(back[0].record).dump(1) << "\nwant\n"
                                  << LocateRecordToJson(want).dump(1);
  EXPECT_DOUBLE_EQ(back[0].located_at, 1796353800.25);
  EXPECT_EQ(txn.exec1("SELECT nodes FROM locate_verdicts")[0].as<int>(), 4);
  EXPECT_EQ(ReadLocateVerdicts(txn, "elsewhere", 10).size(), 0u);

  // The same record again (a replay after a crash between commit and the
  // spool's removal): nothing new.
  RecordWrite again = WriteLocateVerdict(txn, r);
  EXPECT_FALSE(again.inserted);
  EXPECT_EQ(again.id, w.id);
  EXPECT_EQ(txn.exec1("SELECT count(*) FROM locate_suspects")[0].as<int>(), 2);
}

TEST(LocateStore, RefusesAnUnknownSuspectKind) {
  TestDatabase db;
  LocateRecord r = FullRecord();
  r.verdict.suspects[0].kind = "switch";
  pqxx::work txn(db.connection());
  EXPECT_THROW(WriteLocateVerdict(txn, r), pqxx::check_violation);
}

TEST(LocateStore, SpooledVerdictReplaysIntoTheDatabase) {
  TestDatabase db;
  const int64_t run = StoreRun(db, "lab", "2026-12-04T02:00:00Z", std::nullopt);
  Spool spool(::testing::TempDir() + "/locate-spool-" + std::to_string(getpid()));
  std::filesystem::remove_all(spool.dir());
  SpoolBatch batch;
  batch.kind = SpoolBatch::Kind::kLocate;
  batch.target = SpoolTarget{"h", "5432", "fabtrack", "u"};
  batch.locate = FullRecord();
  batch.locate.run_ids = {run};
  const std::string path = spool.Put(batch);
  std::string why;
  std::optional<SpoolBatch> read = spool.Read(path, &why);
  ASSERT_TRUE(read) << why;
  EXPECT_EQ(read->kind, SpoolBatch::Kind::kLocate);
  EXPECT_EQ(read->locate, batch.locate);
  ASSERT_EQ(spool.List().size(), 1u);
  EXPECT_EQ(spool.List()[0].kind, "locate");

  ReplayResult replayed;
  std::ostringstream log;
  replayed = ReplaySpool(spool, db.connection(), batch.target, log, /*adopt=*/true);
  EXPECT_EQ(replayed.replayed, 1) << log.str();
  EXPECT_TRUE(spool.Pending().empty());
  EXPECT_EQ(db.Scalar("SELECT string_agg(s.name, ',' ORDER BY s.rank) FROM locate_suspects s"),
            "leaf1-spine,n2");
  EXPECT_EQ(db.Scalar("SELECT run_id FROM locate_verdict_runs"), std::to_string(run));
  std::filesystem::remove_all(spool.dir());
}

TEST(LocateStore, FlaggedRunsAreTheOpenFindingsOfTheTriggerKinds) {
  TestDatabase db;
  const int64_t before = StoreRun(db, "lab", "2026-12-03T02:00:00Z", std::nullopt);
  const int64_t flagged = StoreRun(db, "lab", "2026-12-04T02:00:00Z", std::nullopt);
  const int64_t resolved = StoreRun(db, "lab", "2026-12-04T02:05:00Z", std::nullopt);
  const int64_t other_kind = StoreRun(db, "lab", "2026-12-04T02:10:00Z", std::nullopt);
  pqxx::work txn(db.connection());
  auto finding = [&](int64_t run, const std::string& kind, const std::string& state) {
    txn.exec_params(
        "INSERT INTO findings (cluster, kind, severity, subject, run_id, message, first_seen, "
        "last_seen, state) VALUES ('lab', $1, 'warning', $2, $3, 'm', now(), now(), $4)",
        kind, "s" + std::to_string(run), run, state);
  };
  finding(before, "busbw_regression", "open");
  finding(flagged, "scaling_drop", "open");
  finding(resolved, "busbw_regression", "resolved");
  finding(other_kind, "socket_fallback", "open");
  EXPECT_EQ(
      ReadFlaggedRuns(txn, "lab", "2026-12-04T00:00:00Z", {"scaling_drop", "busbw_regression"}),
      std::vector<int64_t>{flagged});
  EXPECT_EQ(ReadFlaggedRuns(txn, "lab", "2026-12-03T00:00:00Z", {"busbw_regression"}),
            std::vector<int64_t>{before});
  EXPECT_TRUE(ReadFlaggedRuns(txn, "other", "2026-12-03T00:00:00Z", {"scaling_drop"}).empty());
}

TEST(LocateStore, AnalyzerFindsTheStoredSuspectAndTheReportSaysItInWords) {
  TestDatabase db;
  const int64_t run = StoreRun(db, "lab", "2026-12-04T02:00:00Z", std::nullopt);
  LocateRecord r = FullRecord();
  r.sweep_id.reset();
  r.run_ids = {run};
  LocateRecord old = FullRecord();  // an older verdict: listed, not judged
  old.located_at = "2026-11-20T03:00:00Z";
  old.sweep_id.reset();
  old.verdict.suspects = {};
  old.exit_status = 0;
  old.budget_spent = false;
  {
    pqxx::work txn(db.connection());
    WriteLocateVerdict(txn, r);
    WriteLocateVerdict(txn, old);
    txn.commit();
  }
  AnalysisInput input =
      LoadAnalysisInput(db.connection(), {.cluster = "lab", .since = "2026-12-04T00:00:00Z"});
  ASSERT_EQ(input.locate_verdicts.size(), 2u);
  EXPECT_EQ(input.locate_verdicts[0].record.verdict, r.verdict);
  analyzer::InputIndex index(std::move(input));
  AnalysisResult result = analyzer::Analyze(index, analyzer::AnalyzerConfig{});
  const Finding* found = nullptr;
  for (const Finding& f : result.findings) {
    if (f.kind == "locate_suspect") {
      EXPECT_EQ(found, nullptr) << "one finding per verdict with suspects";
      found = &f;
    }
  }
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found->subject, "uplink leaf1-spine");
  EXPECT_EQ(found->severity, Severity::kCritical);
  EXPECT_EQ(found->run_id, run);
  EXPECT_NE(found->message.find("the uplink leaf1-spine is slow (score 8.2)"), std::string::npos)
      << found->message;
  StoredFindings stored = StoreAnalysis(db.connection(), index.input(), result);
  EXPECT_GE(stored.opened, 1);
  EXPECT_EQ(db.Scalar("SELECT run_id FROM findings WHERE kind = 'locate_suspect'"),
            std::to_string(run));

  const std::string html = analyzer::RenderHtmlReport(index, result);
  for (const std::string& want :
       {std::string("Locate: which node or link is slow"),
        std::string("the uplink leaf1-spine is slow (score 8.2); or else node n2 is slow"),
        std::string("no fault found (healthy spread: bandwidth 4.0%"),
        std::string("stopped by its time budget"), std::string("2026-11-20T03:00:00Z")}) {
    EXPECT_NE(html.find(want), std::string::npos) << want;
  }
}

}  // namespace
}  // namespace fabtrack::store
