// `fabtrack import` of real-format port dumps into a real PostgreSQL: what
// is stored is read back with SQL.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::TestDatabase;

std::string Dump(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/port_dumps/" + name;
}

CommandOutput Import(const std::string& args, const std::string& conninfo = "") {
  std::string db = conninfo.empty() ? "" : " --db '" + conninfo + "'";
  return fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " import " + args + db);
}

TEST(ImportCli, IbstatAndPerfqueryOfOneHostBecomeOneSample) {
  TestDatabase db;
  CommandOutput r = Import(Dump("gpu-b07.ibstat.txt") + " " + Dump("gpu-b07.perfquery.txt") +
                               " --cluster lab --at 2026-12-01T02:00:00Z",
                           db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stored 2 port sample(s) of 1 host snapshot(s)"), std::string::npos)
      << r.out;
  EXPECT_EQ(db.Scalar("SELECT string_agg(host || ':' || device || '/' || port, ',' ORDER BY "
                      "device) FROM ports"),
            "gpu-b07:mlx5_0/1,gpu-b07:mlx5_1/1");
  EXPECT_EQ(db.Scalar("SELECT fw_version FROM ports WHERE device = 'mlx5_0'"), "28.39.2048");
  // ibstat's state and perfquery's counters in the one sample of mlx5_0.
  EXPECT_EQ(db.Scalar("SELECT s.state || ' ' || s.xmit_bytes || ' ' || s.link_downed FROM "
                      "port_counter_samples s JOIN ports p ON p.id = s.port_id WHERE p.device = "
                      "'mlx5_0'"),
            "ACTIVE " + std::to_string(87232017739652ull * 4) + " 2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples WHERE sampled_at = "
                      "'2026-12-01T02:00:00Z' AND phase = 'snapshot'"),
            "2");
  EXPECT_EQ(db.Scalar("SELECT state FROM port_counter_samples s JOIN ports p ON p.id = "
                      "s.port_id WHERE p.device = 'mlx5_1'"),
            "DOWN");
}

TEST(ImportCli, OneUnusableFileStoresNothing) {
  TestDatabase db;
  CommandOutput r = Import(Dump("roce-a3.ibstatus.txt") + " " + Dump("README.md") +
                               " --cluster lab --at 2026-12-01T02:00:00Z",
                           db.conninfo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("README.md:1: not a port dump"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing stored"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "0");
}

TEST(ImportCli, WithoutAClusterPrintsTheSamples) {
  CommandOutput r = Import(Dump("roce-a3.ibv_devinfo.txt") + " --host roce-a3");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["host"], "roce-a3");
  ASSERT_EQ(j["ports"].size(), 2u);
  EXPECT_EQ(j["ports"][0]["rate_gbps"], 200.0);
  EXPECT_EQ(j["ports"][0]["link_layer"], "Ethernet");
}

TEST(ImportCli, EthtoolDumpJoinsItsHcaPortThroughIbdev2netdev) {
  TestDatabase db;
  CommandOutput r =
      Import(Dump("roce-a3.ibstatus.txt") + " " + Dump("roce-a3.ens1f0np0.ethtool.txt") +
                 " --netdev-map " + Dump("roce-a3.ibdev2netdev.txt") +
                 " --cluster lab --at 2026-12-01T02:00:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ethtool -S, 1 port(s) of roce-a3"), std::string::npos) << r.err;
  const std::string mlx5_0 =
      " FROM port_counter_samples s JOIN ports p ON p.id = s.port_id WHERE p.device = 'mlx5_0'";
  // ibstatus's state and ethtool's PFC, drop and link counters in one sample.
  EXPECT_EQ(db.Scalar("SELECT s.state || ' ' || (s.ethtool->>'rx_prio3_pause') || ' ' || "
                      "(s.ethtool->>'rx_discards_phy') || ' ' || "
                      "(s.ethtool->>'link_down_events_phy')" +
                      mlx5_0),
            "ACTIVE 2987 4821 2");
  EXPECT_EQ(db.Scalar("SELECT s.ethtool ? 'rx_bytes'" + mlx5_0), "f");  // traffic totals: not kept
  EXPECT_EQ(db.Scalar("SELECT p.netdev" + mlx5_0), "ens1f0np0");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ports"), "2");
}

TEST(ImportCli, EthtoolDumpWithDeviceAndPortOrAloneSaysWhereItWent) {
  TestDatabase db;
  CommandOutput r = Import(Dump("roce-a3.ens1f0np0.ethtool.txt") +
                               " --device mlx5_4 --port 2 --cluster lab --at 2026-12-01T02:00:00Z",
                           db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT host || ':' || device || '/' || port || ' ' || netdev FROM ports"),
            "roce-a3:mlx5_4/2 ens1f0np0");

  r = Import(Dump("roce-a3.ens1f0np0.ethtool.txt") + " --cluster lab --at 2026-12-01T03:00:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("ens1f0np0 is tied to no HCA port: stored as device ens1f0np0 port 1"),
            std::string::npos)
      << r.err;
  EXPECT_EQ(db.Scalar("SELECT (s.ethtool->>'tx_prio3_pause') FROM port_counter_samples s JOIN "
                      "ports p ON p.id = s.port_id WHERE p.device = 'ens1f0np0' AND p.port = 1"),
            "311");

  r = Import(Dump("roce-a3.ens1f0np0.ethtool.txt") + " --netdev-map " + Dump("gpu-b07.ibstat.txt") +
                 " --cluster lab --at 2026-12-01T04:00:00Z",
             db.conninfo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpu-b07.ibstat.txt:1: not an ibdev2netdev line"), std::string::npos)
      << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "2");
}

TEST(ImportCli, SysfsDumpsStoredAsTheLiveReaderStoresThem) {
  TestDatabase db;
  CommandOutput r = Import(Dump("gpu-c11.sysfs.txt") + " " + Dump("gpu-c12.sysfs.txt") +
                               " --cluster lab --at 2026-12-01T02:00:00Z",
                           db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stored 3 port sample(s) of 2 host snapshot(s)"), std::string::npos)
      << r.out;
  auto of = [](const std::string& device) {
    return " FROM port_counter_samples s JOIN ports p ON p.id = s.port_id WHERE p.device = '" +
           device + "'";
  };
  EXPECT_EQ(
      db.Scalar("SELECT p.host || ' ' || s.state || ' ' || s.rate_gbps || ' ' || "
                "s.xmit_bytes || ' ' || s.port_xmit_wait || ' ' || "
                "array_to_string(s.saturated, ',') || ' ' || "
                "(s.hw_counters->>'local_ack_timeout_err')" +
                of("mlx5_0")),
      "gpu-c11 ACTIVE 400 " + std::to_string(87232017739ull * 4) + " 4294967295 port_xmit_wait 3");
  EXPECT_EQ(db.Scalar("SELECT s.state || ' ' || s.symbol_error || ' ' || "
                      "array_to_string(s.saturated, ',')" +
                      of("mlx5_1")),
            "DOWN 65535 link_downed,symbol_error");
  // Old kernel: the 64-bit counters_ext/ values; "N/A (no PMA)" is NULL.
  EXPECT_EQ(db.Scalar("SELECT p.host || ' ' || p.fw_version || ' ' || s.xmit_bytes || ' ' || "
                      "coalesce(s.port_xmit_wait::text, 'NULL') || ' ' || "
                      "cardinality(s.saturated)" +
                      of("mlx4_0")),
            "gpu-c12 2.42.5000 " + std::to_string(90283746512ull * 4) + " NULL 0");
}

TEST(ImportCli, ASysfsDumpWithABadLineStoresNothing) {
  TestDatabase db;
  const std::string bad = ::testing::TempDir() + "/gpu-c13.sysfs.txt";
  std::ofstream(bad) << "/sys/class/infiniband/mlx5_0/ports/1/state:4: ACTIVE\n"
                        "grep: /sys/class/infiniband/mlx5_0/ports/1/rate: Permission denied\n";
  CommandOutput r =
      Import(Dump("gpu-c11.sysfs.txt") + " " + bad + " --cluster lab --at 2026-12-01T02:00:00Z",
             db.conninfo());
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("gpu-c13.sysfs.txt:2: not a"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing stored"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "0");
}

}  // namespace
}  // namespace fabtrack
