// RoCE PFC pauses around a run (issue 18 item 3): ports read from a fake
// sysfs tree, their netdevs' flow-control statistics from `ethtool -S`
// dumps in the real format before and after, written as a sweep writes a
// run's bracket; the stored per-port deltas are read back with SQL.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>

#include "collector/counters/ethtool_stats.h"
#include "collector/counters/sysfs_ports.h"
#include "core/content_hash.h"
#include "store/spool_replay.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

HostPorts Sample(const std::string& dumps) {
  HostPorts host = ReadSysfsPorts(std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/roce_host");
  host.host = "roce-a3";
  for (PortSample& p : host.ports) {
    EthtoolStats stats = ReadEthtoolDump(std::string(FABTRACK_FIXTURE_DIR) + "/ethtool/" + dumps,
                                         p.netdev.value_or("?"));
    EXPECT_TRUE(stats.error.empty()) << stats.error;
    p.ethtool = FlowControlStats(stats.values);
  }
  return host;
}

TEST(PfcDeltas, PausesOfTheRunWindowAreStoredPerPriority) {
  testing::TestDatabase db;
  store::SpoolBatch batch;
  RunRecord& run = batch.run;
  run.cluster = "lab";
  run.started_at = "2026-12-04T02:00:00Z";
  run.ended_at = "2026-12-04T02:01:00Z";
  run.source = "fabtrack-allreduce";
  run.collective = "all_reduce";
  run.nodes = 1;
  run.ranks = 2;
  run.hosts = {"roce-a3"};
  run.content_hash = Sha256Hex("pfc-deltas");
  run.status = RunStatus::kComplete;
  batch.bracket = store::SpooledBracket{
      {Sample("before")}, {Sample("after")}, "2026-12-04T02:00:00Z", "2026-12-04T02:01:00Z", 60};
  {
    auto connection = std::make_unique<pqxx::connection>(db.conninfo());
    pqxx::work txn(*connection);
    store::AppliedBatch applied = store::ApplyBatch(txn, batch);
    txn.commit();
    EXPECT_EQ(applied.bracketed_hosts, 1u);
  }
  auto delta = [&](const std::string& device, const std::string& counter) {
    return db.Scalar(
        "SELECT d.delta FROM run_port_deltas d JOIN ports p ON p.id = d.port_id WHERE p.device = "
        "'" +
        device + "' AND d.counter = '" + counter + "'");
  };
  EXPECT_EQ(delta("mlx5_0", "ethtool:rx_prio3_pause"), "1245");  // 2987 - 1742
  EXPECT_EQ(delta("mlx5_0", "ethtool:tx_prio3_pause"), "218");
  EXPECT_EQ(delta("mlx5_0", "ethtool:rx_prio3_pause_duration"), "61793");
  EXPECT_EQ(delta("mlx5_0", "ethtool:rx_prio0_pause"), "0");
  EXPECT_EQ(delta("mlx5_1", "ethtool:rx_prio3_pause"), "0");  // the quiet port
  // Only flow-control statistics are kept, not every ethtool counter.
  EXPECT_EQ(delta("mlx5_0", "ethtool:rx_packets"), "NULL");
  EXPECT_EQ(db.Scalar("SELECT round(per_second::numeric, 2) FROM run_port_deltas d JOIN ports p "
                      "ON p.id = d.port_id WHERE p.device = 'mlx5_0' AND d.counter = "
                      "'ethtool:rx_prio3_pause'"),
            "20.75");  // 1245 over 60 s
}

TEST(PfcDeltas, ABrokenDumpIsNamedByFileAndLine) {
  const std::string dir = ::testing::TempDir() + "/ethtool_bad";
  std::filesystem::create_directories(dir);
  std::ofstream(dir + "/eth9") << "NIC statistics:\n     rx_prio3_pause: 7\n     garbage here\n";
  EthtoolStats stats = ReadEthtoolDump(dir, "eth9");
  EXPECT_EQ(stats.values.at("rx_prio3_pause"), 7u);
  EXPECT_NE(stats.error.find(dir + "/eth9:3: not a statistic"), std::string::npos) << stats.error;
  EthtoolStats missing = ReadEthtoolDump(dir, "eth8");
  EXPECT_TRUE(missing.values.empty());
  EXPECT_NE(missing.error.find("eth8: no ethtool -S dump"), std::string::npos) << missing.error;
}

}  // namespace
}  // namespace fabtrack
