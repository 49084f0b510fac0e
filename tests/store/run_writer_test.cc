#include "store/run_writer.h"

#include <gtest/gtest.h>

#include "core/content_hash.h"
#include "tests/support/test_database.h"

namespace fabtrack::store {
namespace {

using fabtrack::testing::TestDatabase;

RunRecord SampleRun(const std::string& content = "sample") {
  RunRecord run;
  run.cluster = "c1";
  run.started_at = "2026-11-30T02:00:00Z";
  run.source = "nccl-tests";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.redop = "sum";
  run.ranks = 16;
  run.nodes = 2;
  run.ranks_per_node = 8;
  run.hosts = {"gpu-a01", "gpu-a02"};
  run.network = "IB";
  run.transports = {"NET/IB", "P2P/IPC"};
  run.gdrdma = true;
  run.nccl_env = {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}};
  run.tags = {{"night", "2026-11-30"}};
  run.content_hash = Sha256Hex(content);
  SizeRow small;
  small.size_bytes = 8;
  small.count = 2;
  small.type = "float";
  small.redop = "sum";
  small.root = -1;
  small.oop = Measurement{36.47, 0.0, 0.0, 0, std::nullopt};
  small.ip = Measurement{34.74, 0.0, 0.0, std::nullopt, std::nullopt};  // N/A under -c 0
  SizeRow big = small;
  big.size_bytes = 1 << 30;
  big.count = (1 << 30) / 4;
  big.oop = Measurement{9187.8, 116.87, 219.12, 0, std::nullopt};
  big.ip = Measurement{9073.4, 118.34, 221.89, 0, std::nullopt};
  run.results = {{small, {}}, {big, {}}};
  run.rank_devices = {{0, 0, 43, "gpu-a01", 0, "0x0f", "NVIDIA A100-SXM4-40GB"},
                      {8, 0, 43, "gpu-a02", 0, "0x0f", "NVIDIA A100-SXM4-40GB"}};
  run.net_devices = {{"gpu-a01", 0, "mlx5_0", 1, "IB", false}};
  ChannelObservation ch;
  ch.host = "gpu-a01";
  ch.channel = 0;
  ch.conn_index = 0;
  ch.from_rank = 7;
  ch.to_rank = 8;
  ch.direction = "send";
  ch.family = "NET/IB";
  ch.detail = "NET/IB/0/GDRDMA";
  ch.nic_index = 0;
  ch.gdrdma = true;
  run.channels = {ch};
  return run;
}

TEST(RunWriterTest, StoresRunWithChildrenAndNulls) {
  TestDatabase db;
  WriteRunResult r;
  {
    pqxx::work txn(db.connection());
    r = WriteRun(txn, SampleRun());
    txn.commit();
  }
  EXPECT_TRUE(r.inserted);
  EXPECT_EQ(r.result_rows, 2u);
  EXPECT_EQ(
      db.Scalar("SELECT count(*) FROM run_results WHERE run_id = " + std::to_string(r.run_id)),
      "2");
  EXPECT_EQ(db.Scalar("SELECT hosts::text FROM runs"), "{gpu-a01,gpu-a02}");
  EXPECT_EQ(db.Scalar("SELECT nccl_env->>'NCCL_IB_HCA' FROM runs"), "mlx5_0,mlx5_1");
  EXPECT_EQ(db.Scalar("SELECT started_at = '2026-11-30 02:00:00+00' FROM runs"), "t");
  // Absent is NULL, not zero: the in-place #wrong was N/A.
  EXPECT_EQ(db.Scalar("SELECT ip_wrong FROM run_results WHERE row_index = 0"), "NULL");
  EXPECT_EQ(db.Scalar("SELECT oop_wrong FROM run_results WHERE row_index = 0"), "0");
  EXPECT_EQ(db.Scalar("SELECT oop_busbw_gbps FROM run_results WHERE row_index = 1"), "219.12");
  EXPECT_EQ(db.Scalar("SELECT lat_p99_us FROM run_results WHERE row_index = 1"), "NULL");
  EXPECT_EQ(db.Scalar("SELECT ended_at FROM runs"), "NULL");
  EXPECT_EQ(db.Scalar("SELECT device || ':' || channels FROM rank_nics WHERE rank = 7"),
            "mlx5_0:1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_ranks"), "2");
  EXPECT_EQ(db.Scalar("SELECT name FROM clusters"), "c1");
}

TEST(RunWriterTest, SameContentIsStoredOnce) {
  TestDatabase db;
  int64_t first_id;
  for (int i = 0; i < 2; ++i) {
    pqxx::work txn(db.connection());
    WriteRunResult r = WriteRun(txn, SampleRun());
    txn.commit();
    if (i == 0) {
      EXPECT_TRUE(r.inserted);
      first_id = r.run_id;
    } else {
      EXPECT_FALSE(r.inserted);
      EXPECT_EQ(r.run_id, first_id);
    }
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "1");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM transport_observations"), "1");
  // Different content is a different run; the same content in another cluster too.
  {
    pqxx::work txn(db.connection());
    EXPECT_TRUE(WriteRun(txn, SampleRun("other")).inserted);
    RunRecord elsewhere = SampleRun();
    elsewhere.cluster = "c2";
    EXPECT_TRUE(WriteRun(txn, elsewhere).inserted);
    txn.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "3");
}

TEST(RunWriterTest, HostileStringsAreDataNotSql) {
  TestDatabase db;
  RunRecord run = SampleRun();
  const std::string evil = "x'); DROP TABLE runs; --\t\"tab\\back\nnewline\" ü";
  run.cluster = evil;
  run.hosts = {evil, "{braces},\"quoted\""};
  run.tags = {{evil, evil}};
  run.channels[0].host = evil;
  run.channels[0].detail = evil;
  run.rank_devices[0].gpu_model = evil;
  {
    pqxx::work txn(db.connection());
    WriteRun(txn, run);
    txn.commit();
  }
  pqxx::nontransaction txn(db.connection());
  pqxx::row row = txn.exec1("SELECT cluster, hosts[1], hosts[2], tags FROM runs");
  EXPECT_EQ(row[0].as<std::string>(), evil);
  EXPECT_EQ(row[1].as<std::string>(), evil);
  EXPECT_EQ(row[2].as<std::string>(), "{braces},\"quoted\"");
  EXPECT_EQ(txn.exec1("SELECT detail FROM transport_observations")[0].as<std::string>(), evil);
  EXPECT_EQ(txn.exec1("SELECT gpu_model FROM run_ranks WHERE rank = 0")[0].as<std::string>(), evil);
  EXPECT_EQ(txn.exec_params1("SELECT tags->>$1 FROM runs", evil)[0].as<std::string>(), evil);
}

TEST(RunWriterTest, AbortedTransactionLeavesNothing) {
  TestDatabase db;
  RunRecord bad = SampleRun();
  bad.results[1].row.size_bytes = -5;  // violates CHECK (size_bytes >= 0) mid-COPY
  {
    pqxx::work txn(db.connection());
    EXPECT_THROW(WriteRun(txn, bad), pqxx::sql_error);
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM runs"), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_results"), "0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM clusters"), "0");
}

TEST(RunWriterTest, HarnessSamplesAndRankTimings) {
  TestDatabase db;
  RunRecord run = SampleRun();
  run.source = "fabtrack-allreduce";
  for (int i = 0; i < 100; ++i) run.latency_samples.push_back({1, false, i, 9000.0 + i});
  run.rank_timings.push_back({1, false, 3, std::string("gpu-a01"), 9100.0, 9090.0, 9300.0, 9400.0});
  run.results[1].latency.p99_us = 9099.0;
  run.results[1].latency.straggler_host = "gpu-a01";
  {
    pqxx::work txn(db.connection());
    WriteRun(txn, run);
    txn.commit();
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM latency_samples"), "100");
  EXPECT_EQ(db.Scalar("SELECT max(latency_us) FROM latency_samples"), "9099");
  EXPECT_EQ(db.Scalar("SELECT host FROM rank_timings"), "gpu-a01");
  EXPECT_EQ(db.Scalar("SELECT straggler_host || lat_p99_us FROM run_results WHERE row_index=1"),
            "gpu-a019099");
}

}  // namespace
}  // namespace fabtrack::store
