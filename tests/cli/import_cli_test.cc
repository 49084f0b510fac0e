// `fabtrack import` of real-format port dumps into a real PostgreSQL: what
// is stored is read back with SQL.
#include <gtest/gtest.h>

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

}  // namespace
}  // namespace fabtrack
