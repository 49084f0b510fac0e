// One node's GPU/NIC wiring (issue 21), whichever source it was read from:
// NCCL's topology dump (NCCL_TOPO_DUMP_FILE), `nvidia-smi topo -m`, or the
// sysfs PCIe tree (collector/readiness/pci_topology). Each GPU carries its
// nearest NIC and the path between them, so the rail check
// (analyzer/topology/rail_check) and the fleet diff compare the same thing
// whatever produced it. Absent is not zero: what a source does not say
// (a matrix has no bus ids, no GDR flag, no link rates) stays empty.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

// How a GPU reaches a NIC, in nvidia-smi topo / NCCL path terms, nearest
// first (the order is used: a smaller value is a shorter path).
enum class TopoPath {
  kPix,   // through at most a single PCIe bridge (switch)
  kPxb,   // through several PCIe bridges, not the host bridge
  kPhb,   // through the host bridge of one root complex (the CPU)
  kNode,  // between root complexes of one NUMA node
  kSys,   // across NUMA nodes (the SMP interconnect: QPI/UPI/xGMI)
};
const char* TopoPathName(TopoPath p);  // "PIX", "PXB", "PHB", "NODE", "SYS"
std::optional<TopoPath> TopoPathFromName(std::string_view name);

struct TopoGpu {
  std::string name;    // "GPU3": the CUDA/NVML index as both sources number it
  std::string bus_id;  // "0000:1b:00.0"; empty when the source has none
  std::optional<int> numa_node;
  std::optional<int> rank;  // NCCL rank on this node (XML only)
  std::optional<bool> gdr;  // the GPU supports GPUDirect RDMA
  // PCIe link of the GPU's own function, as reported (NCCL reads the
  // maximum the slot negotiated: a narrower one is a riser or slot fault).
  std::optional<double> link_gts;  // 16.0 (Gen4), 32.0 (Gen5)
  std::optional<int> link_width;   // lanes
  std::string nic;                 // nearest NIC's name; empty: none at all
  std::optional<TopoPath> path;    // GPU -> nic

  friend bool operator==(const TopoGpu&, const TopoGpu&) = default;
};

struct TopoNic {
  std::string name;  // "mlx5_3"
  std::string bus_id;
  std::optional<int> numa_node;
  std::optional<int64_t> speed_mbps;  // port rate (NCCL's speed attribute)
  std::optional<int> port;
  std::optional<bool> gdr;  // NCCL can register GPU memory with it
  std::optional<double> link_gts;
  std::optional<int> link_width;

  friend bool operator==(const TopoNic&, const TopoNic&) = default;
};

struct NodeTopology {
  std::vector<TopoGpu> gpus;  // in GPU index order
  std::vector<TopoNic> nics;  // in the source's order

  friend bool operator==(const NodeTopology&, const NodeTopology&) = default;
};

// Pairs each GPU with its nearest NIC: paths[g][n] is GPU g -> NIC n
// (nullopt: unknown, never chosen over a known path). Ties go to a NIC on the
// GPU's NUMA node, then to the NIC with the fewest GPUs already paired (a
// board with one NIC per switch pair splits evenly), then to source order:
// the rule the sysfs pairing (PairGpusWithNics) follows. Fills gpu.nic and
// gpu.path; a GPU without any known path keeps an empty nic.
void AssignNearestNics(NodeTopology& topology,
                       const std::vector<std::vector<std::optional<TopoPath>>>& paths);

}  // namespace fabtrack
