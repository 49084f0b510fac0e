#include "collector/readiness/node_readiness.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "collector/counters/sysfs_ports.h"

namespace fabtrack {
namespace {

namespace fs = std::filesystem;

// One problem a check found; a check's message is its findings, worst first.
struct Finding {
  CheckStatus status;
  std::string text;
};

CheckResult Conclude(std::string name, std::vector<Finding> findings, std::string ok_message,
                     nlohmann::json details) {
  CheckResult r;
  r.name = std::move(name);
  r.details = std::move(details);
  if (findings.empty()) {
    r.message = std::move(ok_message);
    return r;
  }
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    return StatusSeverity(a.status) > StatusSeverity(b.status);
  });
  r.status = findings.front().status;
  for (const Finding& f : findings) {
    if (!r.message.empty()) r.message += "; ";
    r.message += f.text;
  }
  return r;
}

std::string Gbps(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

std::string PortName(const PortSample& p) { return p.device + "/" + std::to_string(p.port); }

bool Active(const PortSample& p) { return p.state_code ? *p.state_code == 4 : p.state == "ACTIVE"; }

bool LinkUp(const PortSample& p) {
  return p.phys_state_code ? *p.phys_state_code == 5 : p.phys_state == "LinkUp";
}

// "a", "a and b", "a, b and c".
std::string JoinList(const std::vector<std::string>& items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " and " : ", ";
    out += items[i];
  }
  return out;
}

std::string Lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

std::string Trimmed(std::string s) {
  size_t b = s.find_first_not_of(" \t\r\n");
  size_t e = s.find_last_not_of(" \t\r\n");
  return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

// NCCL reads integer settings with strtoll(value, &end, 0) and ignores a value
// without a number (src/misc/param.cc), so "yes" is not "1".
std::optional<long long> NcclInteger(const Environment& env, const std::string& key) {
  auto it = env.find(key);
  if (it == env.end()) return std::nullopt;
  const char* s = it->second.c_str();
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(s, &end, 0);
  if (end == s || errno != 0) return std::nullopt;
  return v;
}

std::optional<std::string> FirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  line = Trimmed(line);
  if (line.empty()) return std::nullopt;
  return line;
}

bool Exists(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

// The rdma-core provider that opens a device: mlx5_0 -> libmlx5, irdma1 ->
// libirdma, bnxt_re0 -> libbnxt_re.
std::string ProviderLibrary(const std::string& device) {
  if (device.rfind("mlx5", 0) == 0) return "libmlx5";
  if (device.rfind("mlx4", 0) == 0) return "libmlx4";
  if (device.rfind("hfi1", 0) == 0) return "libhfi1verbs";
  if (device.rfind("qib", 0) == 0) return "libipathverbs";
  std::string base = device;
  while (!base.empty() && std::isdigit(static_cast<unsigned char>(base.back()))) base.pop_back();
  while (!base.empty() && base.back() == '_') base.pop_back();
  return "lib" + (base.empty() ? device : base);
}

}  // namespace

const char* StatusName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk:
      return "OK";
    case CheckStatus::kWarning:
      return "WARNING";
    case CheckStatus::kCritical:
      return "CRITICAL";
    case CheckStatus::kUnknown:
      return "UNKNOWN";
  }
  return "UNKNOWN";
}

const char* StatusJsonName(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarning:
      return "warning";
    case CheckStatus::kCritical:
      return "critical";
    case CheckStatus::kUnknown:
      return "unknown";
  }
  return "unknown";
}

int StatusSeverity(CheckStatus s) {
  switch (s) {
    case CheckStatus::kOk:
      return 0;
    case CheckStatus::kUnknown:
      return 1;
    case CheckStatus::kWarning:
      return 2;
    case CheckStatus::kCritical:
      return 3;
  }
  return 1;
}

// ---- 1. HCA ports ----------------------------------------------------------

CheckResult CheckHcaPorts(const HostPorts& host, std::optional<double> expect_rate_gbps,
                          bool states_may_be_absent) {
  nlohmann::json ports = nlohmann::json::array();
  std::set<std::string> devices;
  for (const PortSample& p : host.ports) {
    devices.insert(p.device);
    ports.push_back({{"device", p.device},
                     {"port", p.port},
                     {"link_layer", p.link_layer ? nlohmann::json(*p.link_layer) : nullptr},
                     {"state", p.state ? nlohmann::json(*p.state) : nullptr},
                     {"phys_state", p.phys_state ? nlohmann::json(*p.phys_state) : nullptr},
                     {"rate_gbps", p.rate_gbps ? nlohmann::json(*p.rate_gbps) : nullptr},
                     {"saturated", p.saturated}});
  }
  nlohmann::json problems = nlohmann::json::array();
  for (const PortProblem& p : host.problems) problems.push_back(p.path + ": " + p.message);
  nlohmann::json details = {
      {"ports", ports},
      {"hca_count", devices.size()},
      {"expect_rate_gbps", expect_rate_gbps ? nlohmann::json(*expect_rate_gbps) : nullptr},
      {"problems", problems}};

  std::vector<Finding> findings;
  if (host.ports.empty()) {
    // ReadSysfsPorts says "no RDMA devices under ..." for an empty or missing
    // class/infiniband (no HCA), "cannot list: ..." when it cannot tell.
    auto unreadable =
        std::find_if(host.problems.begin(), host.problems.end(),
                     [](const PortProblem& p) { return p.message.rfind("cannot", 0) == 0; });
    if (unreadable != host.problems.end()) {
      findings.push_back({CheckStatus::kUnknown, "cannot read RDMA ports: " + unreadable->path +
                                                     ": " + unreadable->message});
    } else {
      findings.push_back({CheckStatus::kCritical, "no HCA: class/infiniband has no RDMA device"});
    }
    return Conclude("hca_ports", std::move(findings), "", std::move(details));
  }

  for (const PortSample& p : host.ports) {
    if (Active(p) && LinkUp(p)) continue;
    if (states_may_be_absent && !p.state && !p.phys_state) continue;
    findings.push_back({CheckStatus::kCritical, PortName(p) + " is " + p.state.value_or("?") + "/" +
                                                    p.phys_state.value_or("?")});
  }
  std::set<std::string> slow;
  if (expect_rate_gbps) {
    for (const PortSample& p : host.ports) {
      if (!Active(p) || !p.rate_gbps || *p.rate_gbps + 0.5 >= *expect_rate_gbps) continue;
      slow.insert(PortName(p));
      findings.push_back({CheckStatus::kWarning, PortName(p) + " at " + Gbps(*p.rate_gbps) +
                                                     " Gb/s, expected " + Gbps(*expect_rate_gbps)});
    }
  }
  // Ports of one fabric should have trained alike: the rate most of them have
  // (the higher on a tie) is the norm, the others are named.
  std::map<std::string, std::vector<const PortSample*>> by_layer;
  for (const PortSample& p : host.ports) {
    if (Active(p) && p.rate_gbps) by_layer[p.link_layer.value_or("unknown")].push_back(&p);
  }
  std::vector<std::string> layer_summary;
  for (const auto& [layer, layer_ports] : by_layer) {
    std::map<double, int> counts;
    for (const PortSample* p : layer_ports) ++counts[*p->rate_gbps];
    double norm = 0;
    int best = -1;
    for (const auto& [rate, n] : counts) {
      if (n >= best) {
        best = n;
        norm = rate;
      }
    }
    layer_summary.push_back(std::to_string(layer_ports.size()) + "x " + layer + " " + Gbps(norm) +
                            " Gb/s");
    for (const PortSample* p : layer_ports) {
      if (*p->rate_gbps == norm || slow.count(PortName(*p))) continue;
      findings.push_back({CheckStatus::kWarning, PortName(*p) + " at " + Gbps(*p->rate_gbps) +
                                                     " Gb/s, other " + layer + " ports at " +
                                                     Gbps(norm)});
    }
  }
  // An error counter stuck at its maximum has counted that many errors and
  // counts no more: whatever happens next on the port is invisible in it.
  // (A stuck port_xmit_wait or data counter is common on busy ports and says
  // nothing wrong by itself; those stay in the details.)
  for (const PortSample& p : host.ports) {
    std::vector<std::string> stuck;
    for (const std::string& c : p.saturated) {
      if (std::find(std::begin(kPortErrorCounters), std::end(kPortErrorCounters), c) ==
          std::end(kPortErrorCounters)) {
        continue;
      }
      auto it = p.counters.find(c);
      stuck.push_back(c + (it == p.counters.end() ? "" : " (" + std::to_string(it->second) + ")"));
    }
    if (stuck.empty()) continue;
    findings.push_back({CheckStatus::kWarning,
                        PortName(p) + " error counter(s) at their maximum, no longer counting: " +
                            JoinList(stuck) + " (clear with perfquery -R)"});
  }
  for (const PortProblem& p : host.problems) {
    findings.push_back({CheckStatus::kWarning, p.path + ": " + p.message});
  }
  std::string ok = std::to_string(host.ports.size()) + " port(s) ACTIVE/LinkUp on " +
                   std::to_string(devices.size()) + " HCA(s)";
  if (!layer_summary.empty()) ok += " (" + JoinList(layer_summary) + ")";
  return Conclude("hca_ports", std::move(findings), ok, std::move(details));
}

// ---- 2. Rail optimization --------------------------------------------------

CheckResult CheckRailOptimization(const PciTopology& topology, const HostPorts& ports) {
  // NCCL only uses ACTIVE ports of InfiniBand or Ethernet (RoCE) link layer
  // (ncclIbInit in src/transport/net_ib.cc).
  std::set<std::string> active;
  for (const PortSample& p : ports.ports) {
    if (Active(p) && (p.link_layer == "InfiniBand" || p.link_layer == "Ethernet")) {
      active.insert(p.device);
    }
  }
  std::vector<PciHca> nics;
  for (const PciHca& h : topology.hcas) {
    if (active.count(h.name)) nics.push_back(h);
  }
  std::vector<GpuNicPair> pairs = PairGpusWithNics(topology.gpus, nics);

  std::map<std::string, std::vector<std::string>> gpus_of;
  nlohmann::json gpus = nlohmann::json::array();
  for (size_t i = 0; i < pairs.size(); ++i) {
    const GpuNicPair& p = pairs[i];
    nlohmann::json g = {{"bdf", p.gpu},
                        {"numa_node", p.gpu_numa ? nlohmann::json(*p.gpu_numa) : nullptr},
                        {"nic", p.nic.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.nic)}};
    if (!p.nic.empty()) {
      gpus_of[p.nic].push_back(p.gpu);
      g["path"] = PciPathName(p.path);
      g["same_switch"] = p.path == PciPath::kPix || p.path == PciPath::kPxb;
      g["same_numa_node"] = p.path != PciPath::kSys;
    }
    gpus.push_back(std::move(g));
  }
  nlohmann::json hcas = nlohmann::json::array();
  for (const PciHca& h : topology.hcas) {
    hcas.push_back(
        {{"name", h.name},
         {"bdf", h.pci.bdf},
         {"numa_node", h.pci.numa_node ? nlohmann::json(*h.pci.numa_node) : nullptr},
         {"active", active.count(h.name) > 0},
         {"gpus", gpus_of.count(h.name) ? gpus_of[h.name] : std::vector<std::string>{}}});
  }
  nlohmann::json details = {{"gpu_count", topology.gpus.size()},
                            {"active_hca_count", nics.size()},
                            {"gpus", gpus},
                            {"hcas", hcas},
                            {"problems", topology.problems}};

  std::vector<Finding> findings;
  if (topology.gpus.empty()) {
    findings.push_back({CheckStatus::kUnknown,
                        "no NVIDIA GPU under bus/pci/devices: cannot check one NIC per GPU"});
    return Conclude("rail", std::move(findings), "", std::move(details));
  }
  if (nics.size() < topology.gpus.size()) {
    findings.push_back({CheckStatus::kWarning, std::to_string(topology.gpus.size()) + " GPUs but " +
                                                   std::to_string(nics.size()) + " active HCA(s)"});
  }
  for (const PciHca& h : nics) {
    auto it = gpus_of.find(h.name);
    if (it == gpus_of.end() || it->second.size() < 2) continue;
    findings.push_back(
        {CheckStatus::kWarning, "GPUs " + JoinList(it->second) + " share " + h.name});
  }
  // NCCL's default GPUDirect RDMA level stops short of the host bridge
  // (NCCL_NET_GDR_LEVEL defaults to PXB in recent releases, below PHB in older
  // ones: src/graph/paths.cc), so such a GPU stages through host memory.
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> far;
  for (const GpuNicPair& p : pairs) {
    if (p.nic.empty() || p.path == PciPath::kPix || p.path == PciPath::kPxb) continue;
    far[{p.nic, PciPathName(p.path)}].push_back(p.gpu);
  }
  for (const auto& [key, gpu_list] : far) {
    findings.push_back(
        {CheckStatus::kWarning, (gpu_list.size() == 1 ? "GPU " : "GPUs ") + JoinList(gpu_list) +
                                    (gpu_list.size() == 1 ? " reaches " : " reach ") + key.first +
                                    " only through the CPU (" + key.second + ")"});
  }
  std::string ok = std::to_string(topology.gpus.size()) + " GPUs, " + std::to_string(nics.size()) +
                   " active HCAs: every GPU has its own HCA under its PCIe switch";
  return Conclude("rail", std::move(findings), ok, std::move(details));
}

// ---- 3. GPUDirect RDMA -----------------------------------------------------

std::optional<std::pair<int, int>> ParseKernelVersion(const std::string& release) {
  int major = 0, minor = 0;
  char dot = 0;
  std::istringstream in(release);
  if (!(in >> major >> dot >> minor) || dot != '.') return std::nullopt;
  return std::make_pair(major, minor);
}

// What NCCL needs for GPUDirect RDMA over IB/RoCE, from its source
// (NVIDIA/nccl):
//  - peer memory: src/transport/net_ib (ibGdrSupportInitOnce) accepts
//    /sys/kernel/mm/memory_peers/nv_mem/version, .../nv_mem_nc/version (the
//    legacy nv_peer_mem) or /sys/module/nvidia_peermem/version;
//  - otherwise DMA-BUF: ncclIbDmaBufSupport probes ibv_reg_dmabuf_mr(), which
//    needs the RDMA dma-buf import added in Linux 5.12 (aws-ofi-nccl's
//    nccl_ofi_dmabuf.c cites torvalds/linux bfe0cc6 for it), and src/init.cc
//    dmaBufSupported() needs NCCL_DMABUF_ENABLE (default 1) not 0, a CUDA
//    driver >= 11.7 and CU_DEVICE_ATTRIBUTE_DMA_BUF_SUPPORTED on the GPU.
// The NVIDIA GPU Operator docs (gpu-operator-rdma) describe the same two
// paths, DMA-BUF or the legacy nvidia-peermem module. A kernel that
// backports dma-buf to an older version is not recognised here.
CheckResult CheckGpuDirect(const GdrFacts& facts, const Environment& env) {
  std::optional<std::pair<int, int>> kernel;
  if (facts.kernel_release) kernel = ParseKernelVersion(*facts.kernel_release);
  const bool dmabuf_kernel = kernel && *kernel >= std::make_pair(5, 12);
  auto dmabuf_env = env.find("NCCL_DMABUF_ENABLE");
  const bool dmabuf_disabled = NcclInteger(env, "NCCL_DMABUF_ENABLE") == 0;
  nlohmann::json details = {
      {"nvidia_peermem", facts.nvidia_peermem},
      {"nv_peer_mem", facts.nv_peer_mem},
      {"nvidia_driver", facts.nvidia_driver},
      {"kernel_release", facts.kernel_release ? nlohmann::json(*facts.kernel_release) : nullptr},
      {"dmabuf_kernel", dmabuf_kernel},
      {"driver_version", facts.driver_version ? nlohmann::json(*facts.driver_version) : nullptr},
      {"NCCL_DMABUF_ENABLE",
       dmabuf_env != env.end() ? nlohmann::json(dmabuf_env->second) : nullptr},
      {"path", nullptr}};

  CheckResult r;
  r.name = "gpudirect_rdma";
  if (facts.nvidia_peermem || facts.nv_peer_mem) {
    details["path"] = "peermem";
    r.message = facts.nvidia_peermem ? "nvidia_peermem loaded" : "nv_peer_mem loaded (legacy)";
    r.details = std::move(details);
    return r;
  }
  const std::string fallback =
      "NCCL will fall back to copying through host memory: load "
      "nvidia_peermem";
  if (dmabuf_kernel && facts.nvidia_driver) {
    details["path"] = "dmabuf";
    if (dmabuf_disabled) {
      r.status = CheckStatus::kWarning;
      r.message = "NCCL_DMABUF_ENABLE=0 turns off DMA-BUF, the only GPUDirect RDMA path here; " +
                  fallback + " or unset NCCL_DMABUF_ENABLE";
    } else {
      r.message = "via DMA-BUF (kernel " + *facts.kernel_release +
                  ", NVIDIA driver loaded, no nvidia_peermem)";
    }
    r.details = std::move(details);
    return r;
  }
  if (!kernel) {
    r.status = CheckStatus::kUnknown;
    r.message = facts.kernel_release ? "cannot parse kernel release '" + *facts.kernel_release +
                                           "' and nvidia_peermem is not loaded"
                                     : "cannot read the kernel release (sys/kernel/osrelease) "
                                       "and nvidia_peermem is not loaded";
    r.details = std::move(details);
    return r;
  }
  r.status = CheckStatus::kWarning;
  r.message =
      fallback + " (" +
      (dmabuf_kernel ? std::string("the NVIDIA driver is not loaded")
                     : "kernel " + *facts.kernel_release + " is older than 5.12: no DMA-BUF") +
      ")";
  r.details = std::move(details);
  return r;
}

// ---- 4. libibverbs ---------------------------------------------------------

CheckResult CheckVerbs(const HostPorts& sysfs, const VerbsReport& verbs) {
  std::vector<std::string> sysfs_devices;
  for (const PortSample& p : sysfs.ports) {
    if (std::find(sysfs_devices.begin(), sysfs_devices.end(), p.device) == sysfs_devices.end()) {
      sysfs_devices.push_back(p.device);
    }
  }
  std::set<std::string> opened;
  for (const VerbsDevice& d : verbs.devices) opened.insert(d.name);
  std::vector<std::string> missing;
  for (const std::string& d : sysfs_devices) {
    if (!opened.count(d)) missing.push_back(d);
  }
  std::vector<std::string> differences;
  for (const std::string& d : CrossCheck(sysfs, verbs)) {
    // Devices libibverbs could not open are reported once, below.
    std::string device = d.substr(0, d.find('/'));
    if (opened.count(device)) differences.push_back(d);
  }
  nlohmann::json details = {{"sysfs_devices", sysfs_devices},
                            {"verbs_devices", VerbsDevicesJson(verbs.devices)},
                            {"missing", missing},
                            {"differences", differences},
                            {"error", verbs.error}};

  std::vector<Finding> findings;
  if (sysfs_devices.empty() && verbs.devices.empty()) {
    findings.push_back(
        {CheckStatus::kUnknown, verbs.error.empty()
                                    ? "no RDMA device to open"
                                    : "no RDMA device to open; libibverbs: " + verbs.error});
    return Conclude("verbs", std::move(findings), "", std::move(details));
  }
  if (!missing.empty()) {
    const std::string& first = missing.front();
    std::string text = "rdma-core cannot open " + first + ": ";
    // QueryVerbsPorts names a device it listed but could not open, with errno.
    const std::string marker = first + ": cannot open device: ";
    if (size_t at = verbs.error.find(marker); at != std::string::npos) {
      size_t from = at + marker.size();
      text += verbs.error.substr(from, verbs.error.find(';', from) - from);
    } else if (verbs.devices.empty() && !verbs.error.empty()) {
      text += "libibverbs: " + verbs.error;
    } else {
      text += "is the provider (" + ProviderLibrary(first) + ") installed?";
    }
    if (missing.size() > 1) {
      text += "; " + std::to_string(missing.size() - 1) + " more device(s) not opened";
    }
    findings.push_back({CheckStatus::kCritical, text});
  }
  for (const std::string& d : differences) findings.push_back({CheckStatus::kWarning, d});
  std::string ok = "libibverbs opens all " + std::to_string(opened.size()) + " device(s)";
  return Conclude("verbs", std::move(findings), ok, std::move(details));
}

// ---- 5. NCCL environment ---------------------------------------------------

// Meanings from the NCCL environment variable reference
// (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html) and the code
// that reads them (NVIDIA/nccl src/graph/paths.cc, src/transport/net_ib):
//  - NCCL_IB_DISABLE=1: the IB/RoCE transport is off, NCCL uses sockets;
//  - NCCL_NET=Socket: the socket transport is forced;
//  - NCCL_NET_GDR_LEVEL (formerly NCCL_IB_GDR_LEVEL): the farthest GPU-NIC
//    path for GPUDirect RDMA; LOC (legacy integer 0) never uses it;
//  - NCCL_NET_GDR_READ=0: sends never read GPU memory from the NIC (staged
//    through host memory); the default decides by platform;
//  - NCCL_P2P_DISABLE=1, or NCCL_P2P_LEVEL=LOC/0: no GPU peer-to-peer inside
//    the node, every intra-node copy goes through host memory.
CheckResult CheckNcclEnvironment(const Environment& env) {
  nlohmann::json seen = nlohmann::json::object();
  for (const auto& [k, v] : env) {
    if (k.rfind("NCCL_", 0) == 0) seen[k] = v;
  }
  std::vector<Finding> findings;
  if (auto v = NcclInteger(env, "NCCL_IB_DISABLE"); v && *v != 0) {
    findings.push_back(
        {CheckStatus::kCritical, "NCCL_IB_DISABLE=" + env.at("NCCL_IB_DISABLE") +
                                     " turns InfiniBand/RoCE off: NCCL will use TCP sockets"});
  }
  if (auto it = env.find("NCCL_NET"); it != env.end() && Lower(Trimmed(it->second)) == "socket") {
    findings.push_back(
        {CheckStatus::kCritical, "NCCL_NET=" + it->second + " forces NCCL onto TCP sockets"});
  }
  auto level_off = [&](const std::string& key) {
    auto it = env.find(key);
    if (it == env.end()) return false;
    std::string v = Lower(Trimmed(it->second));
    return v == "loc" || NcclInteger(env, key) == 0;
  };
  for (const char* key : {"NCCL_NET_GDR_LEVEL", "NCCL_IB_GDR_LEVEL"}) {
    if (level_off(key)) {
      findings.push_back({CheckStatus::kWarning,
                          std::string(key) + "=" + env.at(key) + " disables GPUDirect RDMA"});
    }
  }
  if (NcclInteger(env, "NCCL_NET_GDR_READ") == 0) {
    findings.push_back({CheckStatus::kWarning,
                        "NCCL_NET_GDR_READ=" + env.at("NCCL_NET_GDR_READ") +
                            " disables GPUDirect RDMA for sends (staged through host memory)"});
  }
  if (auto v = NcclInteger(env, "NCCL_P2P_DISABLE"); v && *v != 0) {
    findings.push_back({CheckStatus::kWarning,
                        "NCCL_P2P_DISABLE=" + env.at("NCCL_P2P_DISABLE") +
                            " turns GPU peer-to-peer off: intra-node traffic goes through host "
                            "memory"});
  }
  if (level_off("NCCL_P2P_LEVEL")) {
    findings.push_back({CheckStatus::kWarning, "NCCL_P2P_LEVEL=" + env.at("NCCL_P2P_LEVEL") +
                                                   " never uses GPU peer-to-peer"});
  }
  return Conclude("nccl_env", std::move(findings),
                  seen.empty() ? "no NCCL_* setting"
                               : "no NCCL_* setting forces sockets or disables GPUDirect RDMA",
                  {{"variables", seen}});
}

// ---- Gathering and reporting -----------------------------------------------

NodeFacts GatherNodeFacts(const NodeCheckOptions& o) {
  NodeFacts f;
  f.ports = ReadSysfsPorts(o.sysfs_root);
  if (o.rail_optimized) f.topology = ReadPciTopology(o.sysfs_root);
  const std::string& sys = o.sysfs_root;
  f.gdr.nvidia_peermem = Exists(sys + "/module/nvidia_peermem") ||
                         Exists(sys + "/kernel/mm/memory_peers/nvidia-peermem/version");
  f.gdr.nv_peer_mem = Exists(sys + "/module/nv_peer_mem") ||
                      Exists(sys + "/kernel/mm/memory_peers/nv_mem/version") ||
                      Exists(sys + "/kernel/mm/memory_peers/nv_mem_nc/version");
  f.gdr.nvidia_driver = Exists(sys + "/module/nvidia");
  f.gdr.kernel_release = FirstLine(o.proc_root + "/sys/kernel/osrelease");
  f.gdr.driver_version = FirstLine(o.proc_root + "/driver/nvidia/version");
  return f;
}

CheckResult CheckErrorCountersIncreasing(const HostPorts& before, const HostPorts& after,
                                         double seconds) {
  std::vector<Finding> findings;
  nlohmann::json details = {{"seconds", seconds}, {"increases", nlohmann::json::array()}};
  for (const PortSample& a : after.ports) {
    const PortSample* b = nullptr;
    for (const PortSample& p : before.ports) {
      if (p.device == a.device && p.port == a.port) b = &p;
    }
    if (!b) continue;
    std::vector<std::string> grew;
    bool flapping = false;
    for (const char* counter : kPortErrorCounters) {
      auto was = b->counters.find(counter), now = a.counters.find(counter);
      if (was == b->counters.end() || now == a.counters.end() || now->second <= was->second) {
        continue;
      }
      if (std::find(a.saturated.begin(), a.saturated.end(), counter) != a.saturated.end()) continue;
      const uint64_t delta = now->second - was->second;
      grew.push_back(std::string(counter) + " +" + std::to_string(delta));
      details["increases"].push_back(
          {{"port", PortName(a)}, {"counter", counter}, {"increase", delta}});
      const std::string name = counter;
      flapping |= name == "link_downed" || name == "link_error_recovery";
    }
    if (grew.empty()) continue;
    char window[32];
    std::snprintf(window, sizeof window, "%.0f s", seconds);
    findings.push_back({flapping ? CheckStatus::kCritical : CheckStatus::kWarning,
                        PortName(a) + " error counters rising in " + window + ": " +
                            JoinList(grew) + (flapping ? " (the link is flapping)" : "")});
  }
  char ok[96];
  std::snprintf(ok, sizeof ok, "no error counter moved in %.0f s on %zu port(s)", seconds,
                after.ports.size());
  return Conclude("error_counters", std::move(findings), ok, std::move(details));
}

namespace {

void ConcludeReport(NodeReport* r) {
  r->status = CheckStatus::kOk;
  for (const CheckResult& c : r->checks) {
    if (StatusSeverity(c.status) > StatusSeverity(r->status)) r->status = c.status;
  }
}

}  // namespace

NodeReport EvaluatePorts(const NodeFacts& facts, const NodeCheckOptions& o) {
  NodeReport r;
  r.host = facts.ports.host;
  r.checks.push_back(CheckHcaPorts(facts.ports, o.expect_rate_gbps, facts.ports_from_dumps));
  if (facts.ports_after) {
    r.checks.push_back(
        CheckErrorCountersIncreasing(facts.ports, *facts.ports_after, facts.watch_seconds));
  }
  ConcludeReport(&r);
  return r;
}

NodeReport EvaluateNode(const NodeFacts& facts, const NodeCheckOptions& o) {
  NodeReport r = EvaluatePorts(facts, o);
  if (o.rail_optimized) {
    r.checks.push_back(CheckRailOptimization(facts.topology.value_or(PciTopology{}), facts.ports));
  }
  r.checks.push_back(CheckGpuDirect(facts.gdr, facts.env));
  if (facts.verbs) r.checks.push_back(CheckVerbs(facts.ports, *facts.verbs));
  r.checks.push_back(CheckNcclEnvironment(facts.env));
  ConcludeReport(&r);
  return r;
}

std::string FormatNodeReportText(const NodeReport& report) {
  std::map<CheckStatus, int> counts;
  const CheckResult* worst = nullptr;
  for (const CheckResult& c : report.checks) {
    ++counts[c.status];
    if (worst == nullptr && c.status == report.status) worst = &c;
  }
  std::string tally;
  for (CheckStatus s :
       {CheckStatus::kCritical, CheckStatus::kWarning, CheckStatus::kUnknown, CheckStatus::kOk}) {
    if (!counts[s]) continue;
    if (!tally.empty()) tally += ", ";
    tally += std::to_string(counts[s]) + " " + StatusJsonName(s);
  }
  std::string out = std::string("FABTRACK NODE ") + StatusName(report.status) + " - ";
  if (report.status == CheckStatus::kOk || worst == nullptr) {
    out += std::to_string(report.checks.size()) + " checks ok\n";
  } else {
    out += worst->name + ": " + worst->message + "; " + std::to_string(report.checks.size()) +
           " checks (" + tally + ")\n";
  }
  for (const CheckResult& c : report.checks) {
    out += std::string(StatusName(c.status)) + " " + c.name + ": " + c.message + "\n";
  }
  return out;
}

nlohmann::json NodeReportToJson(const NodeReport& report) {
  nlohmann::json checks = nlohmann::json::array();
  for (const CheckResult& c : report.checks) {
    checks.push_back({{"name", c.name},
                      {"status", StatusJsonName(c.status)},
                      {"message", c.message},
                      {"details", c.details}});
  }
  return {{"host", report.host}, {"status", StatusJsonName(report.status)}, {"checks", checks}};
}

}  // namespace fabtrack
