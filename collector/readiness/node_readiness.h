// `fabtrack check node`: is this node ready for RDMA collectives? Each check
// is a pure function from what was read (sysfs ports, the PCIe tree, module
// and kernel facts, libibverbs' answer, the environment) to a CheckResult in
// the monitoring-plugin convention (OK / WARNING / CRITICAL / UNKNOWN), so
// tests feed fake trees or injected values; GatherNodeFacts is the only
// reader, and it reads files only (libibverbs and the environment are the
// caller's, see cli/check_command.cc).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "collector/counters/verbs_ports.h"
#include "collector/readiness/pci_topology.h"
#include "core/json_instances.h"
#include "core/port_sample.h"

namespace fabtrack {

// Values are the plugin exit codes.
enum class CheckStatus { kOk = 0, kWarning = 1, kCritical = 2, kUnknown = 3 };
const char* StatusName(CheckStatus s);      // "OK", "WARNING", ...
const char* StatusJsonName(CheckStatus s);  // "ok", "warning", ...
// Severity for "worst of": CRITICAL > WARNING > UNKNOWN > OK, so that one check
// that could not tell does not hide a known problem.
int StatusSeverity(CheckStatus s);

struct CheckResult {
  std::string name;  // "hca_ports", "rail", "gpudirect_rdma", "verbs", "nccl_env"
  CheckStatus status = CheckStatus::kOk;
  std::string message;  // one line
  nlohmann::json details = nlohmann::json::object();
};

using Environment = std::map<std::string, std::string>;

// 1. Every RDMA port ACTIVE/LinkUp (else CRITICAL naming device/port); no
// port at all is CRITICAL; active ports below `expect_rate_gbps` or at a rate
// other than their link layer's usual one are WARNING.
// `states_may_be_absent`: the ports come from dumps, some of which print no
// state (perfquery, ethtool -S): a port with neither state nor physical
// state is then not judged down (live sysfs that reads none is).
CheckResult CheckHcaPorts(const HostPorts& ports, std::optional<double> expect_rate_gbps,
                          bool states_may_be_absent = false);

// 2. One NIC per GPU: fewer active HCAs than GPUs, two GPUs whose nearest
// HCA is the same, or a GPU whose nearest HCA is reached only through the
// CPU (where NCCL does not use GPUDirect RDMA by default) are WARNING. Only
// HCAs with an ACTIVE InfiniBand/RoCE port in `ports` count.
CheckResult CheckRailOptimization(const PciTopology& topology, const HostPorts& ports);

// Module and kernel facts behind GPUDirect RDMA.
struct GdrFacts {
  bool nvidia_peermem = false;                // /sys/module/nvidia_peermem, or a memory_peers entry
  bool nv_peer_mem = false;                   // the legacy Mellanox module
  bool nvidia_driver = false;                 // /sys/module/nvidia
  std::optional<std::string> kernel_release;  // proc/sys/kernel/osrelease
  std::optional<std::string> driver_version;  // first line of proc/driver/nvidia/version
};

// "5.15.0-105-generic" -> {5, 15}.
std::optional<std::pair<int, int>> ParseKernelVersion(const std::string& release);

// 3. GPUDirect RDMA possible: a peer-memory module (OK), else DMA-BUF on
// kernel >= 5.12 with the NVIDIA driver loaded (OK, unless
// NCCL_DMABUF_ENABLE=0 in `env`), else WARNING.
CheckResult CheckGpuDirect(const GdrFacts& facts, const Environment& env);

// 4. libibverbs opens every device sysfs shows (CRITICAL naming the first
// that it cannot, with the provider library to install), and agrees with
// sysfs on their ports (WARNING).
CheckResult CheckVerbs(const HostPorts& sysfs, const VerbsReport& verbs);

// 5. The NCCL environment does not force sockets (CRITICAL) or turn
// GPUDirect RDMA / peer-to-peer off (WARNING).
CheckResult CheckNcclEnvironment(const Environment& env);

// 6. Error counters moving while the node sits (check node --watch): the
// ports of `before` and `after`, `seconds` apart. A link_downed or
// link_error_recovery step is a flapping link (CRITICAL); any other error
// counter that grew is WARNING naming port, counter and the increase; a
// counter already at its maximum tells nothing and is skipped.
CheckResult CheckErrorCountersIncreasing(const HostPorts& before, const HostPorts& after,
                                         double seconds);

struct NodeCheckOptions {
  std::string sysfs_root = "/sys";
  std::string proc_root = "/proc";
  std::optional<double> expect_rate_gbps;
  bool rail_optimized = false;
  bool verbs = true;
};

// Everything the checks read, gathered once.
struct NodeFacts {
  HostPorts ports;
  // A second reading of the ports `watch_seconds` later (check node --watch).
  std::optional<HostPorts> ports_after;
  double watch_seconds = 0;
  // The ports are saved dumps (check node --ports-from), not sysfs.
  bool ports_from_dumps = false;
  std::optional<PciTopology> topology;  // only when rail_optimized
  GdrFacts gdr;
  std::optional<VerbsReport> verbs;  // absent: --no-verbs
  Environment env;
};

// Reads ports, topology (when asked) and GDR facts from the two roots. Leaves
// verbs and env to the caller.
NodeFacts GatherNodeFacts(const NodeCheckOptions& options);

struct NodeReport {
  std::string host;
  CheckStatus status = CheckStatus::kOk;
  std::vector<CheckResult> checks;
};

// Runs the checks on the facts (pure). The rail check runs only when
// options.rail_optimized, the verbs check only when facts.verbs is set.
NodeReport EvaluateNode(const NodeFacts& facts, const NodeCheckOptions& options);

// The port checks alone (hca_ports; error_counters when facts.ports_after is
// set): what port dumps of a host say (`check node --ports-from`), where the
// rest of the facts would be this machine's, not the dumps' host's.
NodeReport EvaluatePorts(const NodeFacts& facts, const NodeCheckOptions& options);

// "FABTRACK NODE CRITICAL - hca_ports: mlx5_3/1 is DOWN/Polling; 4 checks (1
// critical, 3 ok)", then one "STATUS name: message" line per check.
std::string FormatNodeReportText(const NodeReport& report);
// {"host","status","checks":[{"name","status","message","details"}]}
nlohmann::json NodeReportToJson(const NodeReport& report);

}  // namespace fabtrack
