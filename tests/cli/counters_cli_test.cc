// `fabtrack counters snapshot` on fake sysfs trees laid out like real ones,
// printed and stored into a real PostgreSQL.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::TestDatabase;

using Result = fabtrack::testing::CommandOutput;

Result Counters(const std::string& args, const std::string& db = "") {
  std::string env = db.empty() ? "env -u FABTRACK_DB " : "env FABTRACK_DB='" + db + "' ";
  return fabtrack::testing::RunCommand(env + FABTRACK_CLI + std::string(" counters ") + args);
}

std::string Tree(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/" + name;
}

TEST(CountersCliTest, SnapshotJsonHasTheDocumentedShape) {
  Result r = Counters("snapshot --format json --host gpu-a01 --sysfs " + Tree("ndr_8hca"));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["host"], "gpu-a01");
  ASSERT_EQ(j["ports"].size(), 8u);
  const auto& p0 = j["ports"][0];
  EXPECT_EQ(p0["device"], "mlx5_0");
  EXPECT_EQ(p0["port"], 1);
  EXPECT_EQ(p0["link_layer"], "InfiniBand");
  EXPECT_EQ(p0["state"], "ACTIVE");
  EXPECT_EQ(p0["phys_state"], "LinkUp");
  EXPECT_EQ(p0["rate_gbps"], 400.0);
  ASSERT_TRUE(p0["counters"].contains("port_xmit_data"));
  EXPECT_EQ(p0["xmit_bytes"].get<uint64_t>(), p0["counters"]["port_xmit_data"].get<uint64_t>() * 4);
  EXPECT_TRUE(p0["saturated"].is_array());
  EXPECT_EQ(j["ports"][3]["rate_gbps"], 200.0);  // mlx5_3 trained below its peers
}

TEST(CountersCliTest, SnapshotStoresInventoryAndSample) {
  TestDatabase db;
  Result r =
      Counters("snapshot --host gpu-a01 --cluster lab --sysfs " + Tree("ndr_8hca"), db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stored 8 port sample(s)"), std::string::npos) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ports WHERE host = 'gpu-a01'"), "8");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "8");
  EXPECT_EQ(db.Scalar("SELECT rate_gbps FROM ports WHERE device = 'mlx5_3'"), "200");
  EXPECT_EQ(db.Scalar("SELECT bool_and(xmit_bytes = (counters->>'port_xmit_data')::bigint * 4) "
                      "FROM port_counter_samples"),
            "t");
  // A second snapshot adds samples, not ports.
  ASSERT_EQ(
      Counters("snapshot --host gpu-a01 --cluster lab --sysfs " + Tree("ndr_8hca"), db.conninfo())
          .exit_code,
      0);
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ports"), "8");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "16");
}

TEST(CountersCliTest, FaultsAreAbsentOrSaturatedNeverZero) {
  TestDatabase db;
  Result r =
      Counters("snapshot --host odd --cluster lab --sysfs " + Tree("mixed_faults"), db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) > 0 FROM port_counter_samples WHERE state = 'DOWN'"), "t");
  EXPECT_EQ(db.Scalar("SELECT count(*) > 0 FROM port_counter_samples WHERE saturated <> '{}'"),
            "t");
}

TEST(CountersCliTest, NoRdmaDevicesIsNotAnError) {
  std::string empty = ::testing::TempDir() + "/empty_sysfs_" + std::to_string(getpid());
  std::filesystem::create_directories(empty);
  Result r = Counters("snapshot --sysfs " + empty);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out)["ports"].empty());
  EXPECT_NE(r.err.find("no RDMA devices"), std::string::npos) << r.err;
  std::filesystem::remove_all(empty);
}

TEST(CountersCliTest, StoringWithoutClusterIsAUsageError) {
  TestDatabase db;
  Result r = Counters("snapshot --store --sysfs " + Tree("ndr_8hca"), db.conninfo());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--cluster"), std::string::npos);
}

}  // namespace
}  // namespace fabtrack

namespace fabtrack {
namespace {

TEST(CountersCliTest, WatchSamplesAtFixedIntervalInBatches) {
  TestDatabase db;
  Result r = Counters("watch --interval 0.1 --count 5 --batch 2 --host w1 --cluster lab --sysfs " +
                          Tree("roce_host"),
                      db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.err.find("stored 10 port sample(s)"), std::string::npos) << r.err;  // 5 x 2 ports
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT sampled_at) FROM port_counter_samples "
                      "WHERE phase = 'watch'"),
            "5");
  // Fixed rate: 5 samples 0.1 s apart span about 0.4 s.
  EXPECT_EQ(db.Scalar("SELECT extract(epoch FROM max(sampled_at) - min(sampled_at)) "
                      "BETWEEN 0.35 AND 1.5 FROM port_counter_samples"),
            "t");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM ports WHERE netdev IS NOT NULL"), "2");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples WHERE "
                      "hw_counters ? 'np_cnp_sent'"),
            "10");
}

// --hw-counters on `counters watch`: the stored samples carry only the
// chosen driver counters (none: no hw_counters at all), the rest unchanged.
TEST(CountersCliTest, WatchStoresOnlyTheChosenHwCounters) {
  TestDatabase db;
  for (const char* choice : {"none", "np_cnp_sent"}) {
    Result r = Counters(std::string("watch --interval 0.1 --count 2 --batch 2 --cluster lab ") +
                            "--host " + choice + " --hw-counters " + choice + " --sysfs " +
                            Tree("roce_host"),
                        db.conninfo());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  auto of = [&](const std::string& host, const std::string& what) {
    return db.Scalar("SELECT " + what +
                     " FROM port_counter_samples s JOIN ports p ON p.id = s.port_id "
                     "WHERE p.host = '" +
                     host + "'");
  };
  EXPECT_EQ(of("none", "count(*)"), "4");  // 2 samples x 2 ports
  EXPECT_EQ(of("none", "count(*) FILTER (WHERE hw_counters = '{}')"), "4");
  EXPECT_EQ(of("none", "count(*) FILTER (WHERE counters ? 'port_xmit_data')"), "4");
  EXPECT_EQ(of("np_cnp_sent",
               "string_agg(DISTINCT (SELECT string_agg(k, ',') FROM "
               "jsonb_object_keys(hw_counters) k), ';')"),
            "np_cnp_sent");
}

// RoCE congestion where a run is judged: `counters watch` reads the netdevs'
// PFC statistics with every sample (here from `ethtool -S` dumps in the real
// format, swapped for later ones while the watch runs), so the stored
// samples carry the pauses and their change.
TEST(CountersCliTest, WatchStoresPfcPausesWithEverySample) {
  TestDatabase db;
  const std::string dumps = ::testing::TempDir() + "/watch_ethtool_" + std::to_string(getpid());
  std::filesystem::remove_all(dumps);
  std::filesystem::copy(std::string(FABTRACK_FIXTURE_DIR) + "/ethtool/before", dumps);
  std::thread later([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(1300));
    std::filesystem::copy(std::string(FABTRACK_FIXTURE_DIR) + "/ethtool/after", dumps,
                          std::filesystem::copy_options::overwrite_existing |
                              std::filesystem::copy_options::recursive);
  });
  Result r = Counters(
      "watch --interval 1 --count 4 --batch 1 --host roce-a3 --cluster lab "
      "--sysfs " +
          Tree("roce_host") + " --ethtool-dumps " + dumps,
      db.conninfo());
  later.join();
  std::filesystem::remove_all(dumps);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples WHERE phase = 'watch' AND "
                      "ethtool ? 'tx_prio3_pause'"),
            "8");  // 4 samples x 2 ports
  const std::string pauses =
      " FROM port_counter_samples s JOIN ports p ON p.id = s.port_id WHERE p.device = 'mlx5_0' "
      "AND s.phase = 'watch'";
  EXPECT_EQ(db.Scalar("SELECT min((s.ethtool->>'rx_prio3_pause')::bigint)" + pauses), "1742");
  EXPECT_EQ(db.Scalar("SELECT max((s.ethtool->>'rx_prio3_pause')::bigint)" + pauses), "2987");
}

}  // namespace
}  // namespace fabtrack
