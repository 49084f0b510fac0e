// `fabtrack check node`, the real binary on the fake hosts: exit codes in the
// monitoring-plugin convention and the JSON shape. Each run gets a clean
// environment (env -i) so that NCCL_* settings of whoever runs the tests do
// not leak in; --no-verbs because libibverbs would read this machine.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tests/readiness/node_fixtures.h"
#include "tests/support/run_command.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::NodeFixtures;

CommandOutput Check(const std::string& args, const std::string& env = "") {
  return fabtrack::testing::RunCommand("env -i " + env + " " + FABTRACK_CLI +
                                       std::string(" check node ") + args);
}

std::string On(const std::string& host) {
  return "--no-verbs --sysfs " + NodeFixtures::Sys(host) + " --proc " + NodeFixtures::Proc(host);
}

std::string FirstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

TEST(CheckNodeCliTest, HealthyHostExitsZero) {
  CommandOutput r = Check(On("healthy") + " --rail-optimized --expect-rate 400");
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(FirstLine(r.out), "FABTRACK NODE OK - 4 checks ok");
}

TEST(CheckNodeCliTest, SharedNicsExitOne) {
  CommandOutput r = Check(On("gpu8_hca2") + " --rail-optimized");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_EQ(FirstLine(r.out).rfind("FABTRACK NODE WARNING - rail: 8 GPUs but 2 active HCA(s)", 0),
            0u)
      << r.out;
  // Without --rail-optimized the same host is fine.
  EXPECT_EQ(Check(On("gpu8_hca2")).exit_code, 0);
}

TEST(CheckNodeCliTest, PortDownExitsTwo) {
  CommandOutput r = Check(On("port_faults"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_EQ(
      FirstLine(r.out).rfind("FABTRACK NODE CRITICAL - hca_ports: mlx5_3/1 is DOWN/Polling", 0), 0u)
      << r.out;
  EXPECT_NE(r.out.find("\nCRITICAL hca_ports: "), std::string::npos) << r.out;
}

TEST(CheckNodeCliTest, TheEnvironmentIsChecked) {
  CommandOutput r = Check(On("healthy"), "NCCL_IB_DISABLE=1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("CRITICAL nccl_env: NCCL_IB_DISABLE=1"), std::string::npos) << r.out;
  EXPECT_EQ(Check(On("healthy"), "NCCL_P2P_DISABLE=1").exit_code, 1);
}

TEST(CheckNodeCliTest, OldKernelWithoutPeermemWarns) {
  CommandOutput r = Check(On("old_kernel") + " --format json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["checks"][1]["name"], "gpudirect_rdma");
  EXPECT_EQ(j["checks"][1]["status"], "warning");
}

TEST(CheckNodeCliTest, UnreadableRootOrBadUsageExitsThree) {
  CommandOutput r = Check("--no-verbs --sysfs /nonexistent/sys");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(FirstLine(r.out),
            "FABTRACK NODE UNKNOWN - cannot read sysfs root /nonexistent/sys: No such file or "
            "directory");
  r = Check("--no-verbs --sysfs " + NodeFixtures::Sys("healthy") +
            " --proc /nonexistent/proc --format json");
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["status"], "unknown");
  EXPECT_EQ(Check(On("healthy") + " --format xml").exit_code, 3);
  EXPECT_EQ(Check(On("healthy") + " --expect-rate -5").exit_code, 3);
  EXPECT_EQ(Check(On("healthy") + " --no-such-flag").exit_code, 3);
  EXPECT_EQ(fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " check").exit_code, 3);
}

TEST(CheckNodeCliTest, JsonHasTheDocumentedShape) {
  CommandOutput r = Check(On("port_faults") + " --rail-optimized --expect-rate 400 --format json");
  EXPECT_EQ(r.exit_code, 2) << r.err;
  nlohmann::json j = nlohmann::json::parse(r.out);
  ASSERT_TRUE(j.is_object());
  EXPECT_TRUE(j["host"].is_string());
  EXPECT_FALSE(j["host"].get<std::string>().empty());
  EXPECT_EQ(j["status"], "critical");
  ASSERT_TRUE(j["checks"].is_array());
  std::vector<std::string> names;
  for (const nlohmann::json& c : j["checks"]) {
    names.push_back(c["name"]);
    EXPECT_TRUE(c["status"].is_string());
    EXPECT_TRUE(c["message"].is_string());
    EXPECT_TRUE(c["details"].is_object());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"hca_ports", "rail", "gpudirect_rdma", "nccl_env"}));
  const nlohmann::json& ports = j["checks"][0];
  EXPECT_EQ(ports["status"], "critical");
  EXPECT_EQ(ports["message"], "mlx5_3/1 is DOWN/Polling; mlx5_5/1 at 200 Gb/s, expected 400");
  EXPECT_EQ(ports["details"]["expect_rate_gbps"], 400.0);
  EXPECT_EQ(ports["details"]["ports"][3]["state"], "DOWN");
  const nlohmann::json& rail = j["checks"][1];
  EXPECT_EQ(rail["status"], "warning");
  EXPECT_EQ(rail["details"]["gpus"][3]["nic"], "mlx5_2");
}

// --watch reads the ports again: symbol errors counted while the node sits
// idle are a warning naming port and counter, even on an otherwise healthy
// node.
TEST(CheckNodeCliTest, WatchNamesErrorCountersThatRise) {
  const std::string counter =
      NodeFixtures::Sys("healthy") + "/class/infiniband/mlx5_0/ports/1/counters/symbol_error";
  CommandOutput r = fabtrack::testing::RunCommand(
      "(sleep 0.5; echo 41 > '" + counter + "') & env -i " + FABTRACK_CLI +
      std::string(" check node ") + On("healthy") + " --watch 2 --format json");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  bool found = false;
  for (const auto& c : doc["checks"]) {
    if (c["name"] != "error_counters") continue;
    found = true;
    EXPECT_EQ(c["status"], "warning");
    EXPECT_NE(c["message"].get<std::string>().find("mlx5_0/1 error counters rising in 2 s: "
                                                   "symbol_error +"),
              std::string::npos)
        << c["message"];
  }
  EXPECT_TRUE(found) << r.out;
  // Without --watch the counters are read once: no such check.
  EXPECT_EQ(Check(On("healthy")).out.find("error_counters"), std::string::npos);
}

std::string Dump(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/port_dumps/" + name;
}

// The names of the checks a JSON report ran.
std::vector<std::string> CheckNames(const nlohmann::json& doc) {
  std::vector<std::string> names;
  for (const auto& c : doc["checks"]) names.push_back(c["name"]);
  return names;
}

// Saved sysfs files of another host judged as its ports: the port down and
// the counters stuck at their maximum, and none of this machine's checks.
TEST(CheckNodeCliTest, PortDumpsOfAHostAreJudgedAsItsPorts) {
  CommandOutput r = Check("--ports-from " + Dump("gpu-c11.sysfs.txt") + " --format json");
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out;
  EXPECT_EQ(doc["host"], "gpu-c11");
  EXPECT_EQ(CheckNames(doc), std::vector<std::string>{"hca_ports"});
  const std::string message = doc["checks"][0]["message"];
  EXPECT_NE(message.find("mlx5_1/1 is DOWN"), std::string::npos) << message;
  EXPECT_NE(r.out.find("symbol_error"), std::string::npos) << r.out;  // saturated, named
}

// Two perfquery -x dumps 300 s apart: the error counters that rose.
TEST(CheckNodeCliTest, TwoPortDumpsNameTheErrorCountersThatRose) {
  CommandOutput r = Check("--ports-from " + Dump("gpu-d04.perfquery.0200.txt") + " --ports-after " +
                          Dump("gpu-d04.perfquery.0205.txt") + " --watch 300 --format json");
  // A warning: perfquery prints no port state, which is then not judged.
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  nlohmann::json doc = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << r.out << r.err;
  EXPECT_EQ(doc["host"], "gpu-d04");
  bool found = false;
  for (const auto& c : doc["checks"]) {
    if (c["name"] != "error_counters") continue;
    found = true;
    EXPECT_EQ(c["status"], "warning");
    EXPECT_NE(c["message"].get<std::string>().find(
                  "mlx5_2/1 error counters rising in 300 s: symbol_error +1500"),
              std::string::npos)
        << c["message"];
  }
  EXPECT_TRUE(found) << r.out;
}

TEST(CheckNodeCliTest, UnusablePortDumpsOrAfterWithoutWatchExitThree) {
  CommandOutput r = Check("--ports-from " + Dump("README.md"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("README.md:1: not a port dump"), std::string::npos) << r.err;
  EXPECT_EQ(FirstLine(r.out), "FABTRACK NODE UNKNOWN - port dumps not usable (see above)");
  r = Check("--ports-from " + Dump("no-such-host.ibstat.txt"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("no-such-host.ibstat.txt: cannot read"), std::string::npos) << r.err;
  r = Check("--ports-from " + Dump("gpu-d04.perfquery.0200.txt") + " --ports-after " +
            Dump("gpu-d04.perfquery.0205.txt"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;  // how far apart: --watch
}

// A node-check file: ibstat's Down port is judged, not mlxlink's "State :
// Active" after it; a file of two hosts' dumps is no one host's: UNKNOWN.
TEST(CheckNodeCliTest, PortDumpsAsOperatorsSaveThem) {
  CommandOutput r = Check("--ports-from " + Dump("gpu-f03.node-check.txt"));
  EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
  EXPECT_NE(FirstLine(r.out).find("mlx5_4/1 is DOWN/Polling"), std::string::npos) << r.out;
  r = Check("--ports-from " + Dump("pair-g01-g02.tail.txt"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("the dumps of 2 hosts (gpu-g01, gpu-g02)"), std::string::npos) << r.err;
  r = Check("--ports-from " + Dump("roce-b02.ibstatus.cut.txt"));
  EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
  EXPECT_NE(r.err.find("roce-b02.ibstatus.cut.txt:30: "), std::string::npos) << r.err;
}

}  // namespace
}  // namespace fabtrack
