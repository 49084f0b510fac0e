// Issue 16: the run's node count, hosts and NCCL settings come from what NCCL
// wrote (nNodes, init lines, channels), host names last; --nodes overrides.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collector/ingest/node_count.h"
#include "collector/ingest/run_builder.h"
#include "collector/parse/parse_file.h"

namespace fabtrack {
namespace {

RunRecord IngestFixture(const std::string& name, std::optional<int> nodes = std::nullopt) {
  std::string path = std::string(FABTRACK_FIXTURE_DIR) + "/nccl_logs/" + name;
  ParsedFile parsed = ParsePath(path);
  IngestOptions options;
  options.cluster = "c1";
  options.nodes = nodes;
  SourceFacts source{path, std::string(64, 'a'), "2026-01-02T03:00:00Z"};
  std::vector<RunRecord> runs = BuildRunRecords(parsed, source, options);
  EXPECT_EQ(runs.size(), 1u) << name;
  return runs.empty() ? RunRecord{} : runs[0];
}

std::string Source(const RunRecord& run) {
  auto it = run.parameters.find("node_count_source");
  return it == run.parameters.end() ? "" : it->second;
}

TEST(NodeFactsTest, SocketFallbackExcerptWithOneHostIsFourNodesByNcclsWord) {
  RunRecord run = IngestFixture("socket_fallback_4node_rank0_excerpt_nccl2.21.log");
  EXPECT_EQ(run.hosts, (std::vector<std::string>{"lab-c07"}));
  EXPECT_EQ(run.nodes, 4);
  EXPECT_EQ(run.ranks, 4);
  EXPECT_EQ(run.ranks_per_node, 1);
  EXPECT_EQ(Source(run), "nccl nNodes");
  EXPECT_EQ(run.transports, (std::vector<std::string>{"NET/Socket"}));
}

TEST(NodeFactsTest, IbChannelsMeanMultiNodeWithoutNodesFlag) {
  RunRecord run = IngestFixture("ib_gdrdma_rank0_excerpt_nccl2.12.log");
  EXPECT_EQ(run.hosts.size(), 1u);
  EXPECT_EQ(run.nodes, 2);  // at least: a NET channel has its peer on another node
  EXPECT_EQ(Source(run), "channels (at least)");
}

TEST(NodeFactsTest, NodesFlagStaysAnOverride) {
  RunRecord run = IngestFixture("socket_fallback_4node_rank0_excerpt_nccl2.21.log", 8);
  EXPECT_EQ(run.nodes, 8);
  EXPECT_EQ(Source(run), "--nodes");
}

TEST(NodeFactsTest, InitLinesOfEveryRankCountTheirHosts) {
  RunRecord run = IngestFixture("framework_noise_markdown_readme_nccl2.18.log");
  EXPECT_EQ(run.hosts, (std::vector<std::string>{"tr-node17"}));
  EXPECT_EQ(run.nodes, 1);
  EXPECT_EQ(Source(run), "nccl init lines");
}

TEST(NodeFactsTest, PrefixStrippedLogKeepsItsNetworkAndNamesNoHost) {
  RunRecord run = IngestFixture("prefix_stripped_ibext_v8_nccl2.21.log");
  EXPECT_EQ(run.network, "IBext_v8");
  EXPECT_EQ(run.transports, (std::vector<std::string>{"NET/IBext_v8"}));
  EXPECT_EQ(run.gdrdma, true);
  EXPECT_TRUE(run.hosts.empty());
  EXPECT_EQ(run.nodes, 2);
  EXPECT_EQ(run.ranks_per_node, 8);
  EXPECT_EQ(run.parameters.at("net_plugin"), "NCCL RDMA Plugin v8");
}

TEST(NodeFactsTest, EchoedSettingsAndVersionsAreStoredWithTheRun) {
  RunRecord run = IngestFixture("env_echo_versions_nccl2.28.log");
  EXPECT_EQ(run.nccl_env, (std::map<std::string, std::string>{
                              {"NCCL_IB_HCA", "=mlx5_0:1,mlx5_1:1"},
                              {"NCCL_IB_TIMEOUT", "22"},
                              {"NCCL_SOCKET_IFNAME", "ens7"},
                          }));
  EXPECT_EQ(run.nccl_version, "2.28.9");
  EXPECT_EQ(run.cuda_version, "12.8");
  EXPECT_EQ(run.driver_version, "12.8");
  EXPECT_EQ(run.parameters.at("net_plugin"), "internal");
  EXPECT_EQ(run.nodes, 2);
  EXPECT_EQ(run.ranks_per_node, 4);
}

TEST(NodeFactsTest, CapturedEnvironmentWinsOverTheEcho) {
  ParsedFile parsed;
  parsed.log.env_settings = {{"NCCL_IB_HCA", "mlx5_0"}, {"NCCL_IB_TIMEOUT", "22"}};
  parsed.log.info_lines = 2;
  TestTable t;
  t.environment = {{"NCCL_IB_HCA", "mlx5_0,mlx5_1"}};
  t.complete = true;
  parsed.tests.push_back(t);
  IngestOptions options;
  options.cluster = "c1";
  std::vector<RunRecord> runs = BuildRunRecords(parsed, {"f", std::string(64, 'a'), "x"}, options);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].nccl_env, (std::map<std::string, std::string>{{"NCCL_IB_HCA", "mlx5_0,mlx5_1"},
                                                                  {"NCCL_IB_TIMEOUT", "22"}}));
}

TEST(DecideNodeCountTest, OrderOfEvidence) {
  NcclLogInfo log;
  log.hosts = {"a"};
  ChannelObservation net;
  net.family = "NET/IB";
  log.channels = {net};
  EXPECT_EQ(DecideNodeCount(nullptr, log, {}, std::nullopt).nodes, 2);

  // Both P2P and SHM disabled: single-node ranks talk through the network.
  log.env_settings = {{"NCCL_P2P_DISABLE", "1"}, {"NCCL_SHM_DISABLE", "1"}};
  NodeCount count = DecideNodeCount(nullptr, log, {}, std::nullopt);
  EXPECT_EQ(count.nodes, 1);
  EXPECT_EQ(count.source, "hostnames");

  TestTable t;
  t.hosts = {"a", "b", "c"};
  count = DecideNodeCount(&t, log, {}, std::nullopt);
  EXPECT_EQ(count.nodes, 3);
  EXPECT_EQ(count.source, "nccl-tests rank lines");

  log.nranks = 4;
  log.comm_ranks = {{0, 4, "a", 1}, {1, 4, "a", 2}, {2, 4, "b", 3}, {3, 4, "b", 4}};
  count = DecideNodeCount(&t, log, {}, std::nullopt);
  EXPECT_EQ(count.nodes, 2);
  EXPECT_EQ(count.source, "nccl init lines");

  log.comm_ranks.pop_back();  // rank 3 not seen: the init lines do not tell
  EXPECT_EQ(DecideNodeCount(&t, log, {}, std::nullopt).source, "nccl-tests rank lines");

  log.nnodes = 4;
  count = DecideNodeCount(&t, log, {}, std::nullopt);
  EXPECT_EQ(count.nodes, 4);
  EXPECT_EQ(count.source, "nccl nNodes");

  EXPECT_EQ(DecideNodeCount(&t, log, {}, 5).nodes, 5);
  EXPECT_EQ(DecideNodeCount(nullptr, NcclLogInfo{}, {}, std::nullopt).nodes, std::nullopt);
}

}  // namespace
}  // namespace fabtrack
