// A run that goes through the spool (written as a batch, read back, applied
// after the outage) stores exactly what a direct write stores: every column
// of every run table, the latency figures that ingest derives from the
// per-iteration columns (lat_p50_us, lat_p99_us, lat_cv) included.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "collector/harness/table_printer.h"
#include "collector/ingest/run_builder.h"
#include "collector/parse/parse_file.h"
#include "core/content_hash.h"
#include "core/run_record_json.h"
#include "store/spool.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

namespace fs = std::filesystem;
using fabtrack::testing::TestDatabase;

// What fabtrack-allreduce prints (nccl-tests' columns, then p50, p99, CV),
// captured and ingested as a text file.
std::string HarnessTable() {
  TestParameters p;
  p.threads = 1;
  p.gpus_per_thread = 1;
  p.min_bytes = 8;
  p.max_bytes = 1024;
  p.step_factor = 128;
  p.warmup_iters = 5;
  p.iters = 20;
  p.validation = 1;
  std::vector<RankDevice> devices = {{0, 0, 111, "node1", -1, "host", "CPU (MPI)"},
                                     {1, 0, 222, "node2", -1, "host", "CPU (MPI)"}};
  std::string text;
  for (const auto& l : harness::HeaderLines(p, devices, "fabtrack-allreduce")) text += l + "\n";
  text += harness::ColumnHeaderLines() + "\n";
  text += harness::RowLine(8, 2, "float", "sum", {65.5, 0.0, 0.0, 0, 60.1, 120.7, 0.25},
                           {64.2, 0.0, 0.0, std::nullopt, 60.0, 110.0, 0.2}) +
          "\n";
  const harness::TableHalf big{1200.0, 0.85, 0.85, 0, 1190.0, 1500.0, 0.05};
  text += harness::RowLine(1024, 256, "float", "sum", big, big) + "\n";
  for (const auto& l : harness::TrailerLines(0, 0.425, "fabtrack-allreduce")) text += l + "\n";
  return text;
}

std::string ReadFixture(const std::string& relative) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/" + relative, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

// The runs `fabtrack ingest` builds from one file's text.
std::vector<RunRecord> Ingested(const std::string& text, const std::string& name) {
  IngestOptions options;
  options.cluster = "lab";
  const SourceFacts facts{name, Sha256Hex(text), "2026-12-01T02:00:00Z"};
  return BuildRunRecords(ParseText(text, name), facts, options);
}

std::vector<RunRecord> Runs() {
  std::vector<RunRecord> runs;
  for (const auto& [text, name] :
       {std::pair{HarnessTable(), std::string("harness_stdout.txt")},
        std::pair{ReadFixture("nccl_tests/t08_reduce_scatter_per_iteration_timestamp.txt"),
                  std::string("t08.txt")},
        std::pair{ReadFixture("nccl_tests/j03_allgather_per_iter_check_off.json"),
                  std::string("j03.json")},
        std::pair{ReadFixture("cli/allreduce_2node_ib.txt"), std::string("ib.txt")}}) {
    for (RunRecord& run : Ingested(text, name)) runs.push_back(std::move(run));
  }
  // A harness result file, as `fabtrack ingest` stores it (whole).
  std::string error;
  auto harness = RunRecordFromJson(
      nlohmann::json::parse(ReadFixture("harness/result_2rank_mpi.json")), &error);
  EXPECT_TRUE(harness) << error;
  if (harness) {
    harness->cluster = "lab";
    runs.push_back(*harness);
  }
  return runs;
}

// Every row of every run table, ids replaced by the run's identity, sorted.
std::string Contents(TestDatabase& db) {
  std::string out;
  out += "runs:\n" +
         db.Scalar(
             "SELECT coalesce(string_agg(x, E'\\n' ORDER BY x), '') FROM (SELECT "
             "(to_jsonb(t) - 'id' - 'ingested_at')::text AS x FROM runs t) s") +
         "\n";
  for (const char* table :
       {"run_ranks", "run_results", "latency_samples", "rank_timings", "link_probes",
        "run_net_devices", "transport_observations", "step_results", "step_samples"}) {
    out += std::string(table) + ":\n" +
           db.Scalar(
               "SELECT coalesce(string_agg(x, E'\\n' ORDER BY x), '') FROM (SELECT "
               "(to_jsonb(t) - 'run_id' || jsonb_build_object('run', r.content_hash || "
               "'#' || r.table_index))::text AS x FROM " +
               std::string(table) + " t JOIN runs r ON r.id = t.run_id) s") +
           "\n";
  }
  return out;
}

class SpooledRunTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("fabtrack-spooled-run-test-" + std::to_string(getpid()));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(SpooledRunTest, StoresWhatADirectWriteStores) {
  const std::vector<RunRecord> runs = Runs();
  ASSERT_EQ(runs.size(), 5u);
  TestDatabase direct, replayed;
  Spool spool(dir_.string());
  for (const RunRecord& run : runs) {
    SpoolBatch batch;
    batch.run = run;
    {
      pqxx::work txn(direct.connection());
      EXPECT_TRUE(ApplyBatch(txn, batch).inserted);
      txn.commit();
    }
    // The outage: into the spool, and back out when the database returns.
    const std::string path = spool.Put(batch);
    std::string why;
    std::optional<SpoolBatch> back = spool.Read(path, &why);
    ASSERT_TRUE(back) << why;
    pqxx::work txn(replayed.connection());
    EXPECT_TRUE(ApplyBatch(txn, *back).inserted);
    txn.commit();
  }
  const std::string stored = Contents(direct);
  EXPECT_EQ(Contents(replayed), stored);

  // The figures the spool used to lose, as ingest derives them: p50, p99
  // and CV (a ratio) from the harness table's columns, min/max/p99/CV from
  // nccl-tests' i_* columns, p50 from its JSON per-iteration report.
  for (TestDatabase* db : {&direct, &replayed}) {
    const std::string of_harness_table =
        "FROM run_results x JOIN runs r ON r.id = x.run_id WHERE r.source_file = "
        "'harness_stdout.txt' AND size_bytes = 8";
    EXPECT_EQ(
        db->Scalar("SELECT lat_p50_us || ' ' || lat_p99_us || ' ' || lat_cv " + of_harness_table),
        "60.1 120.7 0.25");
    EXPECT_EQ(db->Scalar("SELECT lat_min_us || ' ' || lat_max_us || ' ' || lat_p99_us || ' ' || "
                         "round(lat_cv::numeric, 6) || ' ' || ip_lat_p99_us FROM run_results x "
                         "JOIN runs r ON r.id = x.run_id WHERE r.source_file = 't08.txt' AND "
                         "size_bytes = 2097152"),
              "95.49 119.11 116.16 0.034000 115.52");
    EXPECT_EQ(db->Scalar("SELECT lat_p50_us || ' ' || ip_lat_p50_us FROM run_results x JOIN "
                         "runs r ON r.id = x.run_id WHERE r.source_file = 'j03.json' AND "
                         "size_bytes = 1048576"),
              "20 19.8");
  }
  EXPECT_NE(stored.find("\"lat_p99_us\": 116.16"), std::string::npos) << stored;
}

}  // namespace
}  // namespace fabtrack::store
