// Facts per run (issue 21 item 4), end to end: a sweep over a fake sysfs
// tree laid out like a ConnectX-7 node's stores each HCA's firmware, each
// port's rate/width, the kernel and the node's ingested topology fingerprint
// with its run; after a firmware flash, a link training down and a re-wired
// node, `fabtrack diff` names exactly those facts.
#include <gtest/gtest.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "tests/support/run_command.h"
#include "tests/support/test_database.h"

namespace fabtrack {
namespace {

using fabtrack::testing::CommandOutput;
using fabtrack::testing::TestDatabase;

// `fabtrack <args>` against `db`: --db goes before a "--" (what follows that
// is the benchmark's).
CommandOutput Fabtrack(std::string args, const TestDatabase& db) {
  const size_t benchmark = args.find(" -- ");
  args.insert(benchmark == std::string::npos ? args.size() : benchmark,
              " --db '" + db.conninfo() + "'");
  return fabtrack::testing::RunCommand(std::string(FABTRACK_CLI) + " " + args);
}

std::string Topology(const std::string& name) {
  return std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/" + name;
}

TEST(NodeFactsCli, SweepStoresFactsAndDiffNamesWhatChanged) {
  TestDatabase db;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  struct utsname uts {};
  ASSERT_EQ(uname(&uts), 0);
  const std::string root = ::testing::TempDir() + "/node_facts_cli_" + db.name();
  ASSERT_EQ(std::system(("sh " + std::string(FABTRACK_FIXTURE_DIR) + "/sysfs/make_cx7_tree.sh " +
                         root + " 2")
                            .c_str()),
            0);
  const std::string sweep =
      "sweep --nodes 1 --cluster lab --ports local --sysfs " + root + " -- -b 8 -e 8 -n 2 -w 1 -q";

  CommandOutput t = Fabtrack(
      "topology ingest " + Topology("nccl_xml_rail8.xml") + " --host " + host + " --cluster lab",
      db);
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  CommandOutput first = Fabtrack(sweep, db);
  ASSERT_EQ(first.exit_code, 0) << first.out << first.err;
  const std::string a = db.Scalar("SELECT min(id) FROM runs");
  const std::string fingerprint_a =
      db.Scalar("SELECT fingerprint FROM node_topologies ORDER BY id LIMIT 1");
  const nlohmann::json facts_a =
      nlohmann::json::parse(db.Scalar("SELECT node_facts::text FROM runs WHERE id = " + a));
  EXPECT_EQ(facts_a, nlohmann::json({{"fw_ver mlx5_0", "28.39.1002"},
                                     {"fw_ver mlx5_1", "28.39.1002"},
                                     {"kernel", uts.release},
                                     {"link mlx5_0/1", "400 Gb/sec (4X NDR)"},
                                     {"link mlx5_1/1", "400 Gb/sec (4X NDR)"},
                                     {"topology", fingerprint_a}}));

  // mlx5_1 flashed and trained down to HDR; the node re-wired (NICs at SYS).
  std::ofstream(root + "/class/infiniband/mlx5_1/fw_ver") << "28.40.1000\n";
  std::ofstream(root + "/class/infiniband/mlx5_1/ports/1/rate") << "200 Gb/sec (4X HDR)\n";
  t = Fabtrack(
      "topology ingest " + Topology("nccl_xml_nic_sys.xml") + " --host " + host + " --cluster lab",
      db);
  ASSERT_EQ(t.exit_code, 0) << t.out << t.err;
  CommandOutput second = Fabtrack(sweep, db);
  ASSERT_EQ(second.exit_code, 0) << second.out << second.err;
  const std::string b = db.Scalar("SELECT max(id) FROM runs");
  const std::string fingerprint_b =
      db.Scalar("SELECT fingerprint FROM node_topologies ORDER BY id DESC LIMIT 1");
  ASSERT_NE(fingerprint_a, fingerprint_b);

  CommandOutput diff = Fabtrack("diff " + a + " " + b + " --format json", db);
  ASSERT_EQ(diff.exit_code, 0) << diff.err;
  std::map<std::string, std::pair<nlohmann::json, nlohmann::json>> facts;
  const nlohmann::json diff_doc = nlohmann::json::parse(diff.out);
  for (const auto& f : diff_doc["facts"]) {
    if (f["name"].get<std::string>().rfind("parameter ", 0) == 0) continue;  // per-run flags
    facts[f["name"].get<std::string>()] = {f["before"], f["after"]};
  }
  using Change = std::pair<nlohmann::json, nlohmann::json>;
  EXPECT_EQ(facts, (std::map<std::string, Change>{
                       {"fw_ver mlx5_1", {"28.39.1002", "28.40.1000"}},
                       {"link mlx5_1/1", {"400 Gb/sec (4X NDR)", "200 Gb/sec (4X HDR)"}},
                       {"topology", {fingerprint_a, fingerprint_b}}}))
      << diff.out;
  CommandOutput text = Fabtrack("diff " + a + " " + b, db);
  EXPECT_NE(text.out.find("fw_ver mlx5_1: 28.39.1002 → 28.40.1000"), std::string::npos) << text.out;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace fabtrack
