// `ras watch`'s verdict names each rank's NIC from its host's topology and
// the facts in which the hosts holding a job differ from the job's others.
#include "analyzer/ras_node_facts.h"

#include <gtest/gtest.h>

#include "analyzer/ras_watch.h"

namespace fabtrack::analyzer {
namespace {

RasWatchRank At(int rank, const std::string& host, const std::string& gpu) {
  RasWatchRank k;
  k.rank = rank;
  k.node = "10.9.0." + std::to_string(rank);
  k.host = host;
  k.gpu = gpu;
  k.detail = "AllReduce 178, others at 180";
  return k;
}

TopoGpu Gpu(int index, const std::string& nic) {
  TopoGpu g;
  g.name = "GPU" + std::to_string(index);
  g.nic = nic;
  return g;
}

HostPortReading Rate(const std::string& host, const std::string& device, double seconds,
                     std::optional<double> gbps) {
  HostPortReading r;
  r.host = host;
  r.device = device;
  r.port = 1;
  r.sampled_at_s = seconds;
  r.sampled_at = "t" + std::to_string(static_cast<int>(seconds));
  r.rate_gbps = gbps;
  return r;
}

const std::set<std::string> kJob = {"gpu-n1", "gpu-n2", "gpu-n3", "gpu-n4"};

RasWatchVerdict LaggardOn(std::vector<RasWatchRank> ranks) {
  RasWatchVerdict v;
  v.health = "warning";
  v.findings.push_back({"laggard", "warning", "0xa1", "2 of 32 behind", "t0", std::move(ranks)});
  return v;
}

TEST(RasNodeFacts, GpuIndexIsNvmlsWhereRasPrintsIt) {
  EXPECT_EQ(TopologyGpuIndex("1 (NVML 3)"), 3);
  EXPECT_EQ(TopologyGpuIndex("1"), 1);
  EXPECT_EQ(TopologyGpuIndex("12"), 12);
  EXPECT_EQ(TopologyGpuIndex(""), std::nullopt);
  EXPECT_EQ(TopologyGpuIndex("?"), std::nullopt);
  EXPECT_EQ(TopologyGpuIndex("0,1"), std::nullopt) << "a process driving two GPUs";
  EXPECT_EQ(TopologyGpuIndex("0,1 (NVML 2,3)"), std::nullopt);
}

TEST(RasNodeFacts, EachRankIsNamedWithItsGpusNearestNic) {
  RasHostKnowledge known;
  known.topologies["gpu-n3"].gpus = {Gpu(0, "mlx5_0"), Gpu(1, "mlx5_1"), Gpu(2, "mlx5_2"),
                                     Gpu(3, "mlx5_3")};
  known.topologies["gpu-n2"].gpus = {Gpu(0, "mlx5_0"), Gpu(1, "")};
  RasWatchVerdict v = LaggardOn({At(17, "gpu-n3", "1 (NVML 3)"), At(9, "gpu-n2", "1"),
                                 At(10, "gpu-n2", "0"), At(11, "gpu-n1", "0"), At(12, "", "0")});
  AttachNodeFacts(known, {}, kJob, &v);
  const auto& ranks = v.findings[0].ranks;
  EXPECT_EQ(ranks[0].nic, "mlx5_3") << "CUDA 1 is NVML 3 under CUDA_VISIBLE_DEVICES";
  EXPECT_EQ(ranks[1].nic, "") << "a GPU the topology pairs with no NIC";
  EXPECT_EQ(ranks[2].nic, "mlx5_0");
  EXPECT_EQ(ranks[3].nic, "") << "no topology stored for gpu-n1";
  EXPECT_EQ(ranks[4].nic, "") << "no host";
  EXPECT_TRUE(v.findings[0].node_facts.empty()) << "no facts, none differ";
}

TEST(RasNodeFacts, TheHostsFactsThatDifferFromTheJobsOthersAreNamed) {
  RasHostKnowledge known;
  for (const std::string& h : kJob) {
    known.facts[h]["fw_ver mlx5_3"] = "28.39.1002";
    known.facts[h]["topology"] = "9b1c0d2e3f4a5b6c7d8e";
  }
  known.facts["gpu-n3"]["fw_ver mlx5_3"] = "28.40.1000";
  known.facts["gpu-n3"]["topology"] = "3fa9c1e2d4b5aaaaaaaa";
  // mlx5_1: the other hosts mostly agree (2 of 3); mlx5_0: they are evenly
  // split (no majority to differ from); mlx5_9: no other host has it.
  known.facts["gpu-n1"]["fw_ver mlx5_1"] = "x";
  known.facts["gpu-n2"]["fw_ver mlx5_1"] = "x";
  known.facts["gpu-n3"]["fw_ver mlx5_1"] = "y";
  known.facts["gpu-n4"]["fw_ver mlx5_1"] = "z";
  known.facts["gpu-n1"]["fw_ver mlx5_0"] = "a";
  known.facts["gpu-n2"]["fw_ver mlx5_0"] = "b";
  known.facts["gpu-n3"]["fw_ver mlx5_0"] = "c";
  known.facts["gpu-n3"]["fw_ver mlx5_9"] = "q";
  known.facts["gpu-x9"]["fw_ver mlx5_3"] = "1.0";  // not one of the job's hosts
  std::vector<HostPortReading> readings = {
      Rate("gpu-n1", "mlx5_3", 5, 400),  Rate("gpu-n2", "mlx5_3", 5, 400),
      Rate("gpu-n4", "mlx5_3", 5, 400),  Rate("gpu-n3", "mlx5_3", 0, 400),
      Rate("gpu-n3", "mlx5_3", 10, 200), Rate("gpu-n3", "mlx5_3", 12, std::nullopt),
      Rate("gpu-n2", "mlx5_5", 5, 400)};
  RasWatchVerdict v = LaggardOn({At(17, "gpu-n3", "3"), At(9, "gpu-n2", "1")});
  AttachNodeFacts(known, readings, kJob, &v);
  EXPECT_EQ(v.findings[0].node_facts,
            std::vector<std::string>({
                "gpu-n3: fw_ver mlx5_1 y; x on 2 of the job's other 3 hosts",
                "gpu-n3: fw_ver mlx5_3 28.40.1000; 28.39.1002 on the job's other 3 hosts",
                "gpu-n3: link mlx5_3/1 200 Gb/s; 400 Gb/s on the job's other 3 hosts",
                "gpu-n3: GPU/NIC wiring 3fa9c1e2d4b5; 9b1c0d2e3f4a on the job's other 3 hosts",
            }))
      << "gpu-n2 agrees with the rest; mlx5_0 split, mlx5_9 alone; the newest rate counts";
}

TEST(RasNodeFacts, AFindingOfManyHostsSaysHowManyMoreDiffer) {
  RasHostKnowledge known;
  std::set<std::string> job;
  std::vector<RasWatchRank> ranks;
  for (int h = 0; h < 130; ++h) {
    std::string host = "gpu-" + std::to_string(1000 + h);
    job.insert(host);
    known.facts[host]["fw_ver mlx5_0"] = h < 30 ? "old" : "new";
    if (h < 30) ranks.push_back(At(h, host, "0"));
  }
  RasWatchVerdict v = LaggardOn(ranks);
  AttachNodeFacts(known, {}, job, &v);
  ASSERT_EQ(v.findings[0].node_facts.size(), kNodeFactLines + 1);
  EXPECT_EQ(v.findings[0].node_facts.front(),
            "gpu-1000: fw_ver mlx5_0 old; new on 100 of the job's other 129 hosts");
  EXPECT_EQ(v.findings[0].node_facts.back(), "and 10 more facts that differ");
}

TEST(RasNodeFacts, ALinkThatRetrainedDuringTheWatchIsAPortChange) {
  std::vector<HostPortReading> readings = {Rate("gpu-n3", "mlx5_3", 0, 400),
                                           Rate("gpu-n3", "mlx5_3", 10, 200)};
  EXPECT_EQ(PortChangesOf("gpu-n3", readings),
            std::vector<std::string>({"mlx5_3 port 1 rate 400 -> 200 Gb/s at t10"}));
}

}  // namespace
}  // namespace fabtrack::analyzer
