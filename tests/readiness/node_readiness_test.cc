// Each readiness check on the fake hosts of tests/fixtures/node (read with the
// real readers), or on injected values where the input is the machine's own
// (libibverbs, the environment).
#include "collector/readiness/node_readiness.h"

#include <gtest/gtest.h>

#include "collector/counters/sysfs_ports.h"
#include "tests/readiness/node_fixtures.h"

namespace fabtrack {
namespace {

using fabtrack::testing::NodeFixtures;

#define EXPECT_CONTAINS(text, part) \
  EXPECT_NE(std::string(text).find(part), std::string::npos) << (text)
#define EXPECT_STARTS_WITH(text, prefix) EXPECT_EQ(std::string(text).rfind(prefix, 0), 0u) << (text)

NodeCheckOptions Options(const std::string& host, bool rail = true) {
  NodeCheckOptions o;
  o.sysfs_root = NodeFixtures::Sys(host);
  o.proc_root = NodeFixtures::Proc(host);
  o.rail_optimized = rail;
  o.verbs = false;
  return o;
}

NodeFacts Facts(const std::string& host) { return GatherNodeFacts(Options(host)); }

PortSample Port(std::string device, std::string state, std::string phys, double rate,
                std::string layer = "InfiniBand") {
  PortSample p;
  p.device = std::move(device);
  p.port = 1;
  p.state = state;
  p.state_code = state == "ACTIVE" ? 4 : 1;
  p.phys_state = phys;
  p.phys_state_code = phys == "LinkUp" ? 5 : 2;
  p.rate_gbps = rate;
  p.link_layer = std::move(layer);
  return p;
}

// ---- hca_ports

TEST(HcaPortsCheckTest, HealthyHostIsOk) {
  CheckResult r = CheckHcaPorts(Facts("healthy").ports, 400);
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_EQ(r.name, "hca_ports");
  EXPECT_EQ(r.message, "8 port(s) ACTIVE/LinkUp on 8 HCA(s) (8x InfiniBand 400 Gb/s)");
  EXPECT_EQ(r.details["hca_count"], 8);
  EXPECT_EQ(r.details["ports"][0]["device"], "mlx5_0");
  EXPECT_EQ(r.details["ports"][0]["rate_gbps"], 400.0);
}

TEST(HcaPortsCheckTest, PortDownIsCriticalAndHalfRateAWarning) {
  CheckResult r = CheckHcaPorts(Facts("port_faults").ports, 400);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "mlx5_3/1 is DOWN/Polling; mlx5_5/1 at 200 Gb/s, expected 400");
}

TEST(HcaPortsCheckTest, WithoutExpectedRateTheOddPortOutIsNamed) {
  CheckResult r = CheckHcaPorts(Facts("port_faults").ports, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message,
            "mlx5_3/1 is DOWN/Polling; mlx5_5/1 at 200 Gb/s, other InfiniBand ports at 400");
}

TEST(HcaPortsCheckTest, NoHcaIsCritical) {
  CheckResult r = CheckHcaPorts(Facts("no_hca").ports, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "no HCA: class/infiniband has no RDMA device");
}

TEST(HcaPortsCheckTest, RatesAreComparedWithinOneLinkLayer) {
  HostPorts h;
  h.ports = {Port("mlx5_0", "ACTIVE", "LinkUp", 400), Port("mlx5_1", "ACTIVE", "LinkUp", 400),
             Port("mlx5_8", "ACTIVE", "LinkUp", 200, "Ethernet"),
             Port("mlx5_9", "ACTIVE", "LinkUp", 200, "Ethernet")};
  CheckResult r = CheckHcaPorts(h, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_EQ(r.message,
            "4 port(s) ACTIVE/LinkUp on 4 HCA(s) (2x Ethernet 200 Gb/s and 2x InfiniBand 400 "
            "Gb/s)");
}

// Real HCAs: link_downed stuck at 255 (8 bits) hides every later flap; a
// stuck port_xmit_wait (busy port) is no finding by itself.
TEST(HcaPortsCheckTest, SaturatedErrorCountersAreAWarning) {
  HostPorts h;
  h.ports = {Port("mlx5_0", "ACTIVE", "LinkUp", 400), Port("mlx5_1", "ACTIVE", "LinkUp", 400)};
  h.ports[0].counters = {{"link_downed", 255}, {"port_xmit_wait", 4294967295}};
  h.ports[0].saturated = {"link_downed", "port_xmit_wait"};
  h.ports[1].counters = {{"port_xmit_wait", 4294967295}};
  h.ports[1].saturated = {"port_xmit_wait"};
  CheckResult r = CheckHcaPorts(h, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(r.message,
            "mlx5_0/1 error counter(s) at their maximum, no longer counting: link_downed (255) "
            "(clear with perfquery -R)");
  EXPECT_EQ(r.details["ports"][1]["saturated"], nlohmann::json({"port_xmit_wait"}));
}

TEST(HcaPortsCheckTest, ActiveButNotLinkUpIsCritical) {
  HostPorts h;
  h.ports = {Port("mlx5_0", "ACTIVE", "LinkUp", 400), Port("mlx5_1", "ACTIVE", "Polling", 400)};
  CheckResult r = CheckHcaPorts(h, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "mlx5_1/1 is ACTIVE/Polling");
}

// A dump that prints no state (perfquery) is not a port down; sysfs that
// reads no state is.
TEST(HcaPortsCheckTest, NoStateInADumpIsNotAPortDown) {
  HostPorts h;
  PortSample p;
  p.device = "mlx5_2";
  p.port = 1;
  p.counters = {{"symbol_error", 12}};
  h.ports = {p};
  EXPECT_EQ(CheckHcaPorts(h, std::nullopt, /*states_may_be_absent=*/true).status, CheckStatus::kOk);
  CheckResult live = CheckHcaPorts(h, std::nullopt);
  EXPECT_EQ(live.status, CheckStatus::kCritical);
  EXPECT_EQ(live.message, "mlx5_2/1 is ?/?");
}

TEST(HcaPortsCheckTest, UnreadableClassIsUnknown) {
  HostPorts h;
  h.problems.push_back({"/sys/class/infiniband", "cannot list: Permission denied"});
  CheckResult r = CheckHcaPorts(h, std::nullopt);
  EXPECT_EQ(r.status, CheckStatus::kUnknown);
  EXPECT_CONTAINS(r.message, "Permission denied");
}

// ---- rail

TEST(RailCheckTest, OneHcaPerGpuUnderItsSwitchIsOk) {
  NodeFacts f = Facts("healthy");
  CheckResult r = CheckRailOptimization(*f.topology, f.ports);
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_EQ(r.message, "8 GPUs, 8 active HCAs: every GPU has its own HCA under its PCIe switch");
  const auto& g0 = r.details["gpus"][0];
  EXPECT_EQ(g0["bdf"], "0000:1a:00.0");
  EXPECT_EQ(g0["nic"], "mlx5_0");
  EXPECT_EQ(g0["path"], "PIX");
  EXPECT_EQ(g0["same_switch"], true);
  EXPECT_EQ(g0["numa_node"], 0);
  EXPECT_EQ(r.details["hcas"][7]["gpus"], nlohmann::json({"0000:c2:00.0"}));
}

TEST(RailCheckTest, EightGpusOnTwoHcasShareThem) {
  NodeFacts f = Facts("gpu8_hca2");
  CheckResult r = CheckRailOptimization(*f.topology, f.ports);
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(r.message,
            "8 GPUs but 2 active HCA(s); "
            "GPUs 0000:1a:00.0, 0000:1e:00.0, 0000:3c:00.0 and 0000:40:00.0 share mlx5_0; "
            "GPUs 0000:9c:00.0, 0000:a0:00.0, 0000:be:00.0 and 0000:c2:00.0 share mlx5_1; "
            "GPUs 0000:3c:00.0 and 0000:40:00.0 reach mlx5_0 only through the CPU (NODE); "
            "GPUs 0000:be:00.0 and 0000:c2:00.0 reach mlx5_1 only through the CPU (NODE)");
  EXPECT_EQ(r.details["active_hca_count"], 2);
  EXPECT_EQ(r.details["gpus"][2]["path"], "NODE");
  EXPECT_EQ(r.details["gpus"][2]["same_switch"], false);
  EXPECT_EQ(r.details["gpus"][2]["same_numa_node"], true);
}

TEST(RailCheckTest, ADownPortLeavesItsGpuSharingANeighboursHca) {
  NodeFacts f = Facts("port_faults");
  CheckResult r = CheckRailOptimization(*f.topology, f.ports);
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(r.message,
            "8 GPUs but 7 active HCA(s); GPUs 0000:3c:00.0 and 0000:40:00.0 share mlx5_2");
  EXPECT_EQ(r.details["hcas"][3]["active"], false);
}

TEST(RailCheckTest, NoGpuIsUnknown) {
  CheckResult r = CheckRailOptimization(PciTopology{}, HostPorts{});
  EXPECT_EQ(r.status, CheckStatus::kUnknown);
  EXPECT_STARTS_WITH(r.message, "no NVIDIA GPU");
}

// ---- gpudirect_rdma

TEST(GpuDirectCheckTest, PeermemLoadedIsOk) {
  CheckResult r = CheckGpuDirect(Facts("healthy").gdr, {});
  EXPECT_EQ(r.status, CheckStatus::kOk);
  EXPECT_EQ(r.message, "nvidia_peermem loaded");
  EXPECT_EQ(r.details["path"], "peermem");
  EXPECT_EQ(r.details["kernel_release"], "5.15.0-105-generic");
  EXPECT_CONTAINS(r.details["driver_version"].get<std::string>(), "550.54.15");
}

TEST(GpuDirectCheckTest, NoPeermemOnAnOldKernelIsAWarning) {
  CheckResult r = CheckGpuDirect(Facts("old_kernel").gdr, {});
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(r.message,
            "NCCL will fall back to copying through host memory: load nvidia_peermem (kernel "
            "4.18.0-477.27.1.el8_8.x86_64 is older than 5.12: no DMA-BUF)");
  EXPECT_EQ(r.details["dmabuf_kernel"], false);
  EXPECT_TRUE(r.details["path"].is_null());
}

TEST(GpuDirectCheckTest, NewKernelWithTheDriverUsesDmaBuf) {
  CheckResult r = CheckGpuDirect(Facts("dmabuf").gdr, {});
  EXPECT_EQ(r.status, CheckStatus::kOk);
  EXPECT_EQ(r.message,
            "via DMA-BUF (kernel 6.8.0-45-generic, NVIDIA driver loaded, no "
            "nvidia_peermem)");
  EXPECT_EQ(r.details["path"], "dmabuf");
}

TEST(GpuDirectCheckTest, DmaBufTurnedOffInNcclIsAWarning) {
  CheckResult r = CheckGpuDirect(Facts("dmabuf").gdr, {{"NCCL_DMABUF_ENABLE", "0"}});
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_STARTS_WITH(r.message, "NCCL_DMABUF_ENABLE=0 turns off DMA-BUF");
  EXPECT_EQ(r.details["NCCL_DMABUF_ENABLE"], "0");
}

TEST(GpuDirectCheckTest, NewKernelWithoutTheDriverIsAWarning) {
  GdrFacts f;
  f.kernel_release = "6.8.0";
  CheckResult r = CheckGpuDirect(f, {});
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_CONTAINS(r.message, "the NVIDIA driver is not loaded");
}

TEST(GpuDirectCheckTest, LegacyPeerMemIsOkAndUnreadableKernelUnknown) {
  GdrFacts legacy;
  legacy.nv_peer_mem = true;
  EXPECT_EQ(CheckGpuDirect(legacy, {}).message, "nv_peer_mem loaded (legacy)");
  GdrFacts nothing;
  nothing.nvidia_driver = true;
  CheckResult r = CheckGpuDirect(nothing, {});
  EXPECT_EQ(r.status, CheckStatus::kUnknown);
  EXPECT_STARTS_WITH(r.message, "cannot read the kernel release");
}

TEST(GpuDirectCheckTest, ParsesKernelReleases) {
  EXPECT_EQ(ParseKernelVersion("5.12.0"), std::make_pair(5, 12));
  EXPECT_EQ(ParseKernelVersion("4.18.0-477.27.1.el8_8.x86_64"), std::make_pair(4, 18));
  EXPECT_EQ(ParseKernelVersion("6.8.0-45-generic"), std::make_pair(6, 8));
  EXPECT_EQ(ParseKernelVersion("garbage"), std::nullopt);
}

// ---- verbs (injected: libibverbs reads the real machine)

// What libibverbs reports on a host whose stack works: sysfs, seen again.
VerbsReport AllOpened(const HostPorts& sysfs) {
  VerbsReport v;
  for (const PortSample& p : sysfs.ports) {
    VerbsDevice d;
    d.name = p.device;
    VerbsPort vp;
    vp.port = p.port;
    vp.state = p.state.value_or("ACTIVE");
    vp.link_layer = p.link_layer.value_or("InfiniBand");
    vp.active_width = 4;
    vp.lane_gbps = p.rate_gbps.value_or(400) / 4;
    d.ports.push_back(vp);
    v.devices.push_back(d);
  }
  return v;
}

TEST(VerbsCheckTest, EveryDeviceOpenedIsOk) {
  HostPorts sysfs = Facts("healthy").ports;
  CheckResult r = CheckVerbs(sysfs, AllOpened(sysfs));
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_EQ(r.message, "libibverbs opens all 8 device(s)");
}

TEST(VerbsCheckTest, HcasInSysfsButNoneInVerbsNamesTheProvider) {
  CheckResult r = CheckVerbs(Facts("healthy").ports, VerbsReport{});
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message,
            "rdma-core cannot open mlx5_0: is the provider (libmlx5) installed?; 7 more "
            "device(s) not opened");
  EXPECT_EQ(r.details["missing"].size(), 8u);
}

TEST(VerbsCheckTest, AnOpenFailureSaysWhy) {
  HostPorts sysfs = Facts("healthy").ports;
  VerbsReport v = AllOpened(sysfs);
  v.devices.erase(v.devices.begin() + 2);
  v.error = "mlx5_2: cannot open device: Permission denied; ";
  CheckResult r = CheckVerbs(sysfs, v);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "rdma-core cannot open mlx5_2: Permission denied");
}

TEST(VerbsCheckTest, DisagreementWithSysfsIsAWarning) {
  HostPorts sysfs = Facts("healthy").ports;
  VerbsReport v = AllOpened(sysfs);
  v.devices[1].ports[0].state = "DOWN";
  CheckResult r = CheckVerbs(sysfs, v);
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(r.message, "mlx5_1/1: state ACTIVE in sysfs, DOWN in verbs");
}

TEST(VerbsCheckTest, NoDeviceAnywhereSaysSo) {
  CheckResult r = CheckVerbs(HostPorts{}, VerbsReport{});
  EXPECT_EQ(r.status, CheckStatus::kUnknown);
  EXPECT_EQ(r.message, "no RDMA device to open");
}

// ---- nccl_env

TEST(NcclEnvCheckTest, NothingSetIsOk) {
  CheckResult r = CheckNcclEnvironment({{"PATH", "/usr/bin"}});
  EXPECT_EQ(r.status, CheckStatus::kOk);
  EXPECT_EQ(r.message, "no NCCL_* setting");
  r = CheckNcclEnvironment({{"NCCL_IB_DISABLE", "0"},
                            {"NCCL_NET", "IB"},
                            {"NCCL_NET_GDR_LEVEL", "PHB"},
                            {"NCCL_NET_GDR_READ", "1"},
                            {"NCCL_P2P_LEVEL", "NVL"}});
  EXPECT_EQ(r.status, CheckStatus::kOk) << r.message;
  EXPECT_EQ(r.details["variables"]["NCCL_NET"], "IB");
}

TEST(NcclEnvCheckTest, SocketsForcedAreCritical) {
  CheckResult r = CheckNcclEnvironment({{"NCCL_IB_DISABLE", "1"}});
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "NCCL_IB_DISABLE=1 turns InfiniBand/RoCE off: NCCL will use TCP sockets");
  r = CheckNcclEnvironment({{"NCCL_NET", "socket"}});
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_EQ(r.message, "NCCL_NET=socket forces NCCL onto TCP sockets");
}

TEST(NcclEnvCheckTest, GpuDirectOrPeerToPeerOffAreWarnings) {
  for (const auto& [key, value] :
       std::vector<std::pair<std::string, std::string>>{{"NCCL_NET_GDR_LEVEL", "LOC"},
                                                        {"NCCL_NET_GDR_LEVEL", "0"},
                                                        {"NCCL_IB_GDR_LEVEL", "loc"},
                                                        {"NCCL_NET_GDR_READ", "0"},
                                                        {"NCCL_P2P_DISABLE", "1"},
                                                        {"NCCL_P2P_LEVEL", "LOC"}}) {
    CheckResult r = CheckNcclEnvironment({{key, value}});
    EXPECT_EQ(r.status, CheckStatus::kWarning) << key << "=" << value;
    EXPECT_STARTS_WITH(r.message, key + "=" + value);
  }
}

TEST(NcclEnvCheckTest, TheWorstComesFirst) {
  CheckResult r = CheckNcclEnvironment({{"NCCL_P2P_DISABLE", "1"}, {"NCCL_IB_DISABLE", "1"}});
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  EXPECT_STARTS_WITH(r.message, "NCCL_IB_DISABLE=1");
  EXPECT_CONTAINS(r.message, "; NCCL_P2P_DISABLE=1");
}

TEST(NcclEnvCheckTest, ValuesNcclCannotParseAreIgnoredAsNcclDoes) {
  EXPECT_EQ(CheckNcclEnvironment({{"NCCL_IB_DISABLE", "yes"}}).status, CheckStatus::kOk);
}

// ---- the whole node

TEST(NodeReportTest, HealthyNodeIsOk) {
  NodeCheckOptions o = Options("healthy");
  o.expect_rate_gbps = 400;
  NodeFacts f = GatherNodeFacts(o);
  f.ports.host = "gpu-a01";
  NodeReport r = EvaluateNode(f, o);
  EXPECT_EQ(r.status, CheckStatus::kOk);
  ASSERT_EQ(r.checks.size(), 4u);
  std::string text = FormatNodeReportText(r);
  EXPECT_STARTS_WITH(text, "FABTRACK NODE OK - 4 checks ok\nOK hca_ports: 8 port(s)");
  EXPECT_CONTAINS(text, "\nOK rail: 8 GPUs, 8 active HCAs");
}

TEST(NodeReportTest, WorstCheckLeadsTheSummary) {
  NodeCheckOptions o = Options("port_faults");
  NodeFacts f = GatherNodeFacts(o);
  f.env = {{"NCCL_P2P_DISABLE", "1"}};
  f.verbs = AllOpened(f.ports);
  NodeReport r = EvaluateNode(f, o);
  EXPECT_EQ(r.status, CheckStatus::kCritical);
  std::string text = FormatNodeReportText(r);
  EXPECT_STARTS_WITH(text, ("FABTRACK NODE CRITICAL - hca_ports: mlx5_3/1 is DOWN/Polling; "
                            "mlx5_5/1 at 200 Gb/s, other InfiniBand ports at 400; 5 checks "
                            "(1 critical, 2 warning, 2 ok)\n"));
  nlohmann::json j = NodeReportToJson(r);
  EXPECT_EQ(j["status"], "critical");
  std::vector<std::string> names;
  for (const auto& c : j["checks"]) names.push_back(c["name"]);
  EXPECT_EQ(names,
            (std::vector<std::string>{"hca_ports", "rail", "gpudirect_rdma", "verbs", "nccl_env"}));
  EXPECT_EQ(j["checks"][1]["status"], "warning");
  EXPECT_EQ(j["checks"][4]["status"], "warning");
}

TEST(NodeReportTest, UnknownDoesNotHideAWarning) {
  NodeCheckOptions o = Options("old_kernel", false);
  NodeFacts f = GatherNodeFacts(o);
  f.verbs = VerbsReport{};
  f.ports = HostPorts{};
  f.ports.ports.push_back(Port("mlx5_0", "ACTIVE", "LinkUp", 400));
  f.verbs->devices.push_back({"mlx5_0", "28.39", {}});
  f.gdr.kernel_release.reset();
  NodeReport r = EvaluateNode(f, o);
  // gpudirect_rdma could not tell (unknown); verbs disagrees (warning).
  EXPECT_EQ(r.status, CheckStatus::kWarning);
  EXPECT_EQ(StatusSeverity(CheckStatus::kUnknown), 1);
}

// ---- error_counters (check node --watch)

HostPorts WithCounters(std::map<std::string, uint64_t> counters) {
  HostPorts h;
  h.host = "n1";
  PortSample p = Port("mlx5_0", "ACTIVE", "LinkUp", 400);
  p.counters = std::move(counters);
  h.ports.push_back(p);
  return h;
}

TEST(ErrorCountersCheckTest, RisingCountersWarnAndAFlappingLinkIsCritical) {
  const HostPorts before = WithCounters({{"symbol_error", 10}, {"link_downed", 2}});
  CheckResult quiet = CheckErrorCountersIncreasing(before, before, 5);
  EXPECT_EQ(quiet.status, CheckStatus::kOk);
  EXPECT_EQ(quiet.message, "no error counter moved in 5 s on 1 port(s)");

  CheckResult rising = CheckErrorCountersIncreasing(
      before, WithCounters({{"symbol_error", 15}, {"link_downed", 2}}), 5);
  EXPECT_EQ(rising.status, CheckStatus::kWarning);
  EXPECT_EQ(rising.message, "mlx5_0/1 error counters rising in 5 s: symbol_error +5");
  EXPECT_EQ(rising.details["increases"][0]["increase"], 5);

  CheckResult flapping = CheckErrorCountersIncreasing(
      before, WithCounters({{"symbol_error", 10}, {"link_downed", 3}}), 5);
  EXPECT_EQ(flapping.status, CheckStatus::kCritical);
  EXPECT_CONTAINS(flapping.message, "link_downed +1 (the link is flapping)");

  // A counter pinned at its maximum moved only in appearance: skipped.
  HostPorts pinned = WithCounters({{"symbol_error", 65535}, {"link_downed", 2}});
  pinned.ports[0].saturated = {"symbol_error"};
  EXPECT_EQ(CheckErrorCountersIncreasing(before, pinned, 5).status, CheckStatus::kOk);
}

}  // namespace
}  // namespace fabtrack
