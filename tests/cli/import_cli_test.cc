// `fabtrack import` of real-format port dumps into a real PostgreSQL: what
// is stored is read back with SQL.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

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

// Counter deltas between two imports of one port, as SQL reads them back:
// "counter delta per_second saturated reset_seen" of the window ending at `end`.
std::string WindowRow(TestDatabase& db, const std::string& host, const std::string& counter,
                      const std::string& end) {
  return db.Scalar(
      "SELECT coalesce(d.delta::text, 'NULL') || ' ' || coalesce(round(d.per_second::numeric, "
      "2)::text, 'NULL') || ' ' || d.saturated || ' ' || d.reset_seen FROM run_port_deltas d JOIN "
      "ports p ON p.id = d.port_id WHERE d.run_id IS NULL AND p.host = '" +
      host + "' AND d.counter = '" + counter + "' AND d.window_end = '" + end + "'");
}

CommandOutput Analyze(TestDatabase& db) {
  return fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) +
                                       " analyze --cluster lab --format json --db '" +
                                       db.conninfo() + "'");
}

// The findings of `kind` in an `analyze --format json` output.
std::vector<nlohmann::json> FindingsOf(const nlohmann::json& report, const std::string& kind) {
  std::vector<nlohmann::json> out;
  for (const nlohmann::json& f : report["findings"]) {
    if (f["kind"] == kind) out.push_back(f);
  }
  return out;
}

TEST(ImportCli, TwoImportsOfAPortAreAWindowThatTheAnalyzerJudges) {
  TestDatabase db;
  CommandOutput r =
      Import(Dump("gpu-d04.perfquery.0200.txt") + " --cluster lab --at 2026-12-01T02:00:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.find("counter window"), std::string::npos) << r.out;  // nothing to pair with yet
  r = Import(Dump("gpu-d04.perfquery.0205.txt") + " --cluster lab --at 2026-12-01T02:05:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stored 1 port sample(s) of 1 host snapshot(s) in cluster lab, 1 counter "
                       "window(s)"),
            std::string::npos)
      << r.out;
  // The fixtures' differences over the 300 s between them.
  EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:05:00Z"),
            "1500 5.00 false false");
  EXPECT_EQ(WindowRow(db, "gpu-d04", "port_xmit_wait", "2026-12-01T02:05:00Z"),
            "3700000000 12333333.33 false false");
  // perfquery's 4-octet data words as bytes.
  EXPECT_EQ(WindowRow(db, "gpu-d04", "xmit_bytes", "2026-12-01T02:05:00Z"),
            "9646899200000 32156330666.67 false false");
  EXPECT_EQ(db.Scalar("SELECT count(DISTINCT (port_id, window_start, window_end)) FROM "
                      "run_port_deltas WHERE window_start = '2026-12-01T02:00:00Z'"),
            "1");

  CommandOutput a = Analyze(db);
  ASSERT_EQ(a.exit_code, 2) << a.out << a.err;  // critical: 1500 symbol errors >= 1000
  nlohmann::json report = nlohmann::json::parse(a.out);
  EXPECT_EQ(report["judged_runs"], 0);
  EXPECT_EQ(report["judged_port_windows"], 1);
  std::vector<nlohmann::json> errors = FindingsOf(report, "port_errors");
  ASSERT_EQ(errors.size(), 1u) << a.out;
  EXPECT_EQ(errors[0]["severity"], "critical");
  EXPECT_EQ(errors[0]["subject"], "gpu-d04:mlx5_2/1");
  EXPECT_EQ(errors[0]["host"], "gpu-d04");
  EXPECT_EQ(errors[0]["device"], "mlx5_2");
  EXPECT_EQ(errors[0]["port"], 1);
  EXPECT_EQ(errors[0]["run_id"], nullptr);
  EXPECT_EQ(errors[0]["value"], 1500.0);  // PortRcvErrors +3 is below the noise floor
  EXPECT_EQ(errors[0]["evidence"]["window"]["start"], "2026-12-01T02:00:00Z");
  EXPECT_EQ(errors[0]["evidence"]["window"]["end"], "2026-12-01T02:05:00Z");
  EXPECT_NE(errors[0]["message"].get<std::string>().find("symbol_error +1500"), std::string::npos)
      << errors[0];
  std::vector<nlohmann::json> congestion = FindingsOf(report, "congestion");
  ASSERT_EQ(congestion.size(), 1u) << a.out;
  EXPECT_EQ(congestion[0]["subject"], "gpu-d04:mlx5_2/1");
  EXPECT_NEAR(congestion[0]["value"].get<double>(), 3.7e9 / 300, 1);
  // Problems name the port too: what `analyze` leads with.
  bool problem = false;
  for (const nlohmann::json& p : report["problems"]) {
    if (p["kind"] == "port_errors" && p["host"] == "gpu-d04" && p["device"] == "mlx5_2" &&
        p["port"] == 1 && p["first_seen"].get<std::string>().rfind("2026-12-01T02:05:00", 0) == 0)
      problem = true;
  }
  EXPECT_TRUE(problem) << report["problems"];
}

TEST(ImportCli, AResetOrAnotherHostGivesNoBogusDelta) {
  TestDatabase db;
  // Another host's dump at 02:00 is no earlier snapshot of gpu-d04's port.
  CommandOutput r = Import(Dump("gpu-d04.perfquery.0200.txt") +
                               " --host gpu-d05 --cluster lab --at 2026-12-01T02:00:00Z",
                           db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Import(Dump("gpu-d04.perfquery.0205.txt") + " --cluster lab --at 2026-12-01T02:05:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_port_deltas"), "0");
  // After `perfquery -x -R` every counter is lower: counted from zero again,
  // not a wrapped 2^64 - x.
  r = Import(Dump("gpu-d04.perfquery.0210.txt") + " --cluster lab --at 2026-12-01T02:10:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:10:00Z"), "3 0.01 false true");
  EXPECT_EQ(WindowRow(db, "gpu-d04", "port_xmit_wait", "2026-12-01T02:10:00Z"),
            "52000 173.33 false true");
  EXPECT_EQ(WindowRow(db, "gpu-d04", "xmit_bytes", "2026-12-01T02:10:00Z"),
            "4823449600 16078165.33 false true");
  EXPECT_EQ(db.Scalar("SELECT max(delta) < 10000000000000 FROM run_port_deltas"), "t");
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_port_deltas d JOIN ports p ON p.id = d.port_id "
                      "WHERE p.host = 'gpu-d05'"),
            "0");
  CommandOutput a = Analyze(db);
  ASSERT_EQ(a.exit_code, 0) << a.out << a.err;
  nlohmann::json report = nlohmann::json::parse(a.out);
  EXPECT_EQ(report["judged_port_windows"], 1);
  EXPECT_TRUE(FindingsOf(report, "port_errors").empty()) << a.out;
  EXPECT_TRUE(FindingsOf(report, "congestion").empty()) << a.out;
}

TEST(ImportCli, ASaturatedCounterHasNoDeltaAndNoRate) {
  TestDatabase db;
  ASSERT_EQ(Import(Dump("gpu-d04.perfquery.0210.txt") + " --cluster lab --at 2026-12-01T02:10:00Z",
                   db.conninfo())
                .exit_code,
            0);
  CommandOutput r =
      Import(Dump("gpu-d04.perfquery.0215.txt") + " --cluster lab --at 2026-12-01T02:15:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(WindowRow(db, "gpu-d04", "port_xmit_wait", "2026-12-01T02:15:00Z"),
            "NULL NULL true false");
  EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:15:00Z"),
            "NULL NULL true false");
  EXPECT_EQ(WindowRow(db, "gpu-d04", "port_rcv_errors", "2026-12-01T02:15:00Z"),
            "2 0.01 false false");
  CommandOutput a = Analyze(db);
  ASSERT_EQ(a.exit_code, 1) << a.out << a.err;  // a warning: how much it counted is unknown
  nlohmann::json report = nlohmann::json::parse(a.out);
  EXPECT_TRUE(FindingsOf(report, "congestion").empty()) << a.out;  // saturated is not a rate
  std::vector<nlohmann::json> errors = FindingsOf(report, "port_errors");
  ASSERT_EQ(errors.size(), 1u) << a.out;
  EXPECT_EQ(errors[0]["severity"], "warning");
  EXPECT_EQ(errors[0]["evidence"]["counters"]["symbol_error"], "saturated");
  EXPECT_EQ(errors[0]["subject"], "gpu-d04:mlx5_2/1");
}

TEST(ImportCli, ADumpImportedLateSplitsTheWindowAndAgainChangesNothing) {
  TestDatabase db;
  for (const char* at : {"0200", "0210"}) {
    ASSERT_EQ(Import(Dump(std::string("gpu-d04.perfquery.") + at + ".txt") +
                         " --cluster lab --at 2026-12-01T" + std::string(at).substr(0, 2) + ":" +
                         std::string(at).substr(2) + ":00Z",
                     db.conninfo())
                  .exit_code,
              0);
  }
  EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:10:00Z"), "3 0.01 false true");
  for (int time = 0; time < 2; ++time) {  // the second time: the same rows again
    CommandOutput r =
        Import(Dump("gpu-d04.perfquery.0205.txt") + " --cluster lab --at 2026-12-01T02:05:00Z",
               db.conninfo());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("2 counter window(s)"), std::string::npos) << r.out;
    EXPECT_EQ(db.Scalar("SELECT string_agg(DISTINCT to_char(window_start AT TIME ZONE 'UTC', "
                        "'HH24:MI') || '-' || to_char(window_end AT TIME ZONE 'UTC', 'HH24:MI'), "
                        "',') FROM run_port_deltas"),
              "02:00-02:05,02:05-02:10");
    EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:05:00Z"),
              "1500 5.00 false false");
    EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:10:00Z"),
              "3 0.01 false true");
    EXPECT_EQ(db.Scalar("SELECT count(*) FROM run_port_deltas WHERE counter = 'symbol_error'"),
              "2");
  }
}

TEST(ImportCli, DumpsOfTwoTimesInOneImportAreOneWindow) {
  TestDatabase db;
  // Without --at each file's time is its mtime.
  const std::string dir = ::testing::TempDir();
  for (const char* at : {"0200", "0205"}) {
    const std::string copy = dir + "/gpu-d04.perfquery." + at + ".txt";
    ASSERT_EQ(std::system(("cp " + Dump(std::string("gpu-d04.perfquery.") + at + ".txt") + " " +
                           copy + " && touch -d '2026-12-01 " + std::string(at).substr(0, 2) + ":" +
                           std::string(at).substr(2) + ":00 UTC' " + copy)
                              .c_str()),
              0);
  }
  CommandOutput r = Import(
      dir + "/gpu-d04.perfquery.0205.txt " + dir + "/gpu-d04.perfquery.0200.txt --cluster lab",
      db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("of 2 host snapshot(s) in cluster lab, 1 counter window(s)"),
            std::string::npos)
      << r.out;
  EXPECT_EQ(WindowRow(db, "gpu-d04", "symbol_error", "2026-12-01T02:05:00Z"),
            "1500 5.00 false false");
}

TEST(ImportCli, TwoEthtoolDumpsOfARocePortGiveItsPfcPauseRate) {
  TestDatabase db;
  for (const auto& [file, at] : {std::pair{"roce-a3.ens1f0np0.ethtool.txt", "02:00"},
                                 std::pair{"roce-a3.ens1f0np0.ethtool.0210.txt", "02:10"}}) {
    CommandOutput r = Import(Dump("roce-a3.ibstatus.txt") + " " + Dump(file) + " --netdev-map " +
                                 Dump("roce-a3.ibdev2netdev.txt") + " --cluster lab --at " +
                                 "2026-12-01T" + at + ":00Z",
                             db.conninfo());
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  // 912400 pause frames received over the 600 s between the dumps.
  EXPECT_EQ(WindowRow(db, "roce-a3", "ethtool:rx_prio3_pause", "2026-12-01T02:10:00Z"),
            "912400 1520.67 false false");
  EXPECT_EQ(WindowRow(db, "roce-a3", "ethtool:rx_discards_phy", "2026-12-01T02:10:00Z"),
            "12 0.02 false false");
  // Without --cluster: the one cluster with runs or snapshot windows.
  CommandOutput a = fabtrack::testing::RunCommand(
      std::string(FABTRACK_CLI) + " analyze --format json --db '" + db.conninfo() + "'");
  ASSERT_EQ(a.exit_code, 1) << a.out << a.err;
  nlohmann::json report = nlohmann::json::parse(a.out);
  std::vector<nlohmann::json> congestion = FindingsOf(report, "congestion");
  ASSERT_EQ(congestion.size(), 1u) << a.out;
  EXPECT_EQ(congestion[0]["subject"], "roce-a3:mlx5_0/1");
  EXPECT_NE(congestion[0]["message"].get<std::string>().find("PFC pause"), std::string::npos)
      << congestion[0];
  EXPECT_NEAR(congestion[0]["evidence"]["per_second"]["ethtool:rx_prio3_pause"].get<double>(),
              912400.0 / 600, 0.01);
}

// --- Dumps as operators save and paste them (issue 30) ---

// A dump cut off inside its last line or block, whatever the tool: exit 1
// naming the file and line, nothing stored (the good file beside it neither).
TEST(ImportCli, ACutOffDumpStoresNothing) {
  TestDatabase db;
  for (const auto& [name, line] :
       std::vector<std::pair<std::string, int>>{{"gpu-e21.ibstat.cut.txt", 41},
                                                {"roce-b02.ibstatus.cut.txt", 30},
                                                {"gpu-d04.perfquery.cut.txt", 23},
                                                {"gpu-d04.perfquery.cut-at-line.txt", 22},
                                                {"roce-a3.ibv_devinfo.cut.txt", 30},
                                                {"roce-a3.ens1f0np0.ethtool.cut.txt", 26},
                                                {"gpu-c11.sysfs.cut.txt", 13}}) {
    CommandOutput r = Import(Dump("gpu-b07.ibstat.txt") + " " + Dump(name) +
                                 " --device mlx5_0 --cluster lab --at 2026-12-01T02:00:00Z",
                             db.conninfo());
    EXPECT_EQ(r.exit_code, 1) << name << "\n" << r.err;
    EXPECT_NE(r.err.find(name + ":" + std::to_string(line) + ": "), std::string::npos)
        << name << "\n"
        << r.err;
    EXPECT_NE(r.err.find("nothing stored"), std::string::npos) << r.err;
  }
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "0");
}

// ibstat then mlxlink in one node-check file: the port is as ibstat says.
TEST(ImportCli, ANodeCheckFileStoresIbstatsStateNotMlxlinks) {
  TestDatabase db;
  CommandOutput r = Import(
      Dump("gpu-f03.node-check.txt") + " --cluster lab --at 2026-12-01T02:00:00Z", db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT p.host || ' ' || p.device || ' ' || s.state || ' ' || s.phys_state "
                      "FROM port_counter_samples s JOIN ports p ON p.id = s.port_id"),
            "gpu-f03 mlx5_4 DOWN Polling");
}

// Two hosts' sections in one document: a sample per host, not one merged.
TEST(ImportCli, ADocumentOfTwoHostsStoresEachHost) {
  TestDatabase db;
  CommandOutput r = Import(
      Dump("pair-g01-g02.tail.txt") + " --cluster lab --at 2026-12-01T02:00:00Z", db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("stored 2 port sample(s) of 2 host snapshot(s)"), std::string::npos)
      << r.out;
  EXPECT_EQ(db.Scalar("SELECT string_agg(p.host || ':' || p.device || ' ' || s.rate_gbps, ',' "
                      "ORDER BY p.host) FROM port_counter_samples s JOIN ports p ON p.id = "
                      "s.port_id"),
            "gpu-g01:mlx5_0 200,gpu-g02:mlx5_0 100");
  // --host cannot name both: refused, nothing more stored.
  r = Import(Dump("pair-g01-g02.pdsh.txt") +
                 " --host gpu-g09 --cluster lab --at "
                 "2026-12-01T03:00:00Z",
             db.conninfo());
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("pair-g01-g02.pdsh.txt:1: holds the dumps of 2 hosts"), std::string::npos)
      << r.err;
  EXPECT_EQ(db.Scalar("SELECT count(*) FROM port_counter_samples"), "2");
}

// The cat-loop sysfs dump (`=== ./FILE ===`), the shape real saturated
// counters come in, at two times: saturated counters have no delta and no
// rate, the analyzer says they are stuck, and the counter that moved counts.
TEST(ImportCli, SysfsCatLoopDumpsWithSaturatedCountersEndToEnd) {
  TestDatabase db;
  ASSERT_EQ(
      Import(Dump("gpu-h05.sysfs-catloop.0200.txt") + " --cluster lab --at 2026-12-01T02:00:00Z",
             db.conninfo())
          .exit_code,
      0);
  CommandOutput r =
      Import(Dump("gpu-h05.sysfs-catloop.0210.txt") + " --cluster lab --at 2026-12-01T02:10:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT array_to_string(s.saturated, ',') FROM port_counter_samples s "
                      "WHERE s.sampled_at = '2026-12-01T02:10:00Z'"),
            "link_downed,port_rcv_data,port_xmit_discards,port_xmit_wait");
  const std::string end = "2026-12-01T02:10:00Z";
  for (const char* stuck :
       {"port_xmit_wait", "link_downed", "port_xmit_discards", "port_rcv_data", "rcv_bytes"}) {
    EXPECT_EQ(WindowRow(db, "gpu-h05", stuck, end), "NULL NULL true false") << stuck;
  }
  EXPECT_EQ(WindowRow(db, "gpu-h05", "symbol_error", end), "40 0.07 false false");
  EXPECT_EQ(WindowRow(db, "gpu-h05", "xmit_bytes", end),
            std::to_string((96301128773632ull - 96120455301120ull) * 4) + " " +
                "1204489816.75 false false");
  CommandOutput a = Analyze(db);
  ASSERT_EQ(a.exit_code, 1) << a.out << a.err;  // a warning
  nlohmann::json report = nlohmann::json::parse(a.out);
  EXPECT_TRUE(FindingsOf(report, "congestion").empty()) << a.out;  // a stuck counter is no rate
  std::vector<nlohmann::json> errors = FindingsOf(report, "port_errors");
  ASSERT_EQ(errors.size(), 1u) << a.out;
  EXPECT_EQ(errors[0]["subject"], "gpu-h05:mlx5_1/1");
  EXPECT_EQ(errors[0]["evidence"]["counters"]["link_downed"], "saturated");
  EXPECT_EQ(errors[0]["evidence"]["counters"]["port_xmit_discards"], "saturated");
  EXPECT_EQ(errors[0]["evidence"]["counters"]["symbol_error"], 40);
}

// Banner lines before `ethtool -S`'s "NIC statistics:" and comment lines
// before sysfs lines: read, stored.
TEST(ImportCli, EthtoolAfterBannersAndSysfsAfterComments) {
  TestDatabase db;
  CommandOutput r =
      Import(Dump("roce-a3.ethtool-banner.txt") + " " + Dump("gpu-c14.sysfs-comments.txt") +
                 " --netdev-map " + Dump("roce-a3.ibdev2netdev.txt") +
                 " --cluster lab --at 2026-12-01T02:00:00Z",
             db.conninfo());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(db.Scalar("SELECT string_agg(p.host || ':' || p.device, ',' ORDER BY p.host, "
                      "p.device) FROM ports p"),
            "gpu-c14:i40iw0,gpu-c14:mlx5_0,roce-a3:mlx5_1");
  EXPECT_EQ(db.Scalar("SELECT s.ethtool->>'rx_prio3_pause' FROM port_counter_samples s JOIN ports "
                      "p ON p.id = s.port_id WHERE p.device = 'mlx5_1'"),
            "2987");
}

TEST(ImportCli, AMarkdownFilesExtensionIsNoInterface) {
  // Notes pasted from a how-to, saved as HOST.md: the ethtool -S in them was
  // stored as interface "md".
  const std::string dir = ::testing::TempDir() + "/import_md";
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(Dump("roce-a4.ens2f0np0.ethtool-annotated.md"), dir + "/roce-a4.md",
                             std::filesystem::copy_options::overwrite_existing);
  CommandOutput r = Import(dir + "/roce-a4.md");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err.find(" md "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("names no interface"), std::string::npos) << r.err;
  r = Import(dir + "/roce-a4.md --netdev ens2f0np0");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("\"rx_prio3_pause\": 5120"), std::string::npos) << r.out;
}

}  // namespace
}  // namespace fabtrack
