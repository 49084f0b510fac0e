// Each node's CPU window of a sweep run (schema 023) in the real database:
// stored with its run from a batch, read back as it was written, replaced
// when written again, gone with its run.
#include "store/run_cpu_window_store.h"

#include <gtest/gtest.h>

#include <pqxx/pqxx>

#include "core/content_hash.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

SpoolBatch BusyRun() {
  SpoolBatch batch;
  RunRecord& run = batch.run;
  run.cluster = "lab";
  run.started_at = "2026-12-05T02:00:00Z";
  run.ended_at = "2026-12-05T02:01:00Z";
  run.source = "fabtrack-allreduce";
  run.backend = "mpi";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.ranks = 2;
  run.nodes = 2;
  run.hosts = {"node01", "node02"};
  run.content_hash = Sha256Hex("cpu-window-test");
  run.status = RunStatus::kComplete;
  ResultRow r;
  r.row.size_bytes = 8;
  r.row.count = 2;
  r.row.type = "float";
  r.row.oop = Measurement{.time_us = 10.5, .algbw_gbps = 1.25, .busbw_gbps = 2.5};
  run.results.push_back(r);
  batch.cpu_windows = {{.host = "node01",
                        .seconds = 61.25,
                        .cpus = 64,
                        .busy_fraction = 0.5,
                        .steal_fraction = 0,
                        .other_cpus = 0.125,
                        .load1_before = 0.5,
                        .load1_after = 2.25},
                       {.host = "node02",
                        .seconds = 61.5,
                        .cpus = 64,
                        .busy_fraction = 0.875,
                        .steal_fraction = 0.0625,
                        .other_cpus = 24.5,
                        .load1_before = 20.5,
                        .load1_after = 27.75,
                        .top_others = {{"backup-agent", 1200.5}, {"python3", 301.25}}}};
  return batch;
}

TEST(RunCpuWindowStore, StoredWithItsRunReadBackReplacedAndGoneWithIt) {
  TestDatabase db;
  const SpoolBatch batch = BusyRun();
  int64_t run_id = 0;
  {
    pqxx::work txn(db.connection());
    AppliedBatch applied = ApplyBatch(txn, batch);
    ASSERT_TRUE(applied.inserted);
    run_id = applied.run_id;
    txn.commit();
  }
  {
    pqxx::work txn(db.connection());
    auto windows = ReadRunCpuWindows(txn, {run_id, run_id + 1000});
    ASSERT_EQ(windows.size(), 1u);
    EXPECT_EQ(windows[run_id], batch.cpu_windows);
    // Written again (a replayed spool): replaced, not doubled.
    std::vector<NodeCpuWindow> again = batch.cpu_windows;
    again[1].other_cpus = 30;
    again[1].top_others.clear();
    WriteRunCpuWindows(txn, run_id, again);
    EXPECT_EQ(ReadRunCpuWindows(txn, {run_id})[run_id], again);
    txn.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_cpu_windows"), "2");
  db.Scalar("DELETE FROM runs WHERE id = " + std::to_string(run_id) + " RETURNING 1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_cpu_windows"), "0");
}

}  // namespace
}  // namespace fabtrack::store
