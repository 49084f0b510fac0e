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
  // The most the device supports, where the source says (sysfs max_link_*):
  // judged by the rail check, not stored (the fleet diff compares wiring).
  std::optional<double> max_link_gts;
  std::optional<int> max_link_width;
  std::string nic;               // nearest NIC's name; empty: none at all
  std::optional<TopoPath> path;  // GPU -> nic

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
  std::optional<double> max_link_gts;  // as TopoGpu's: judged, not stored
  std::optional<int> max_link_width;

  friend bool operator==(const TopoNic&, const TopoNic&) = default;
};

// A PCIe switch's or bridge's uplink, as a source that describes the PCIe
// tree reports it (NCCL's XML and its GRAPH print; a matrix has none). A
// narrow or slow uplink throttles every GPU and NIC below it however well
// they negotiated their own links (an x1 bridge, a Gen1 2.5 GT/s link, a VM's
// PCI[0.2]), so the rail check compares it with the links just below it.
struct TopoUplink {
  std::string upper;  // the end towards the CPU: "CPU0" or the bus id of the bridge above
  std::string lower;  // the switch or bridge whose uplink it is ("0000:65:00.0")
  std::optional<double> link_gts;       // XML link_speed
  std::optional<int> link_width;        // XML link_width
  std::optional<double> bandwidth_gbs;  // GRAPH print: PCI[bw], the GB/s NCCL assumes
  // The best of the links directly below it (to switches, GPUs, NICs).
  std::optional<double> below_gts;
  std::optional<int> below_width;
  std::optional<double> below_bandwidth_gbs;
  std::vector<std::string> gpus;  // GPUs below it, by name
  std::vector<std::string> nics;  // NICs below it, by name

  friend bool operator==(const TopoUplink&, const TopoUplink&) = default;
};

struct NodeTopology {
  std::vector<TopoGpu> gpus;  // in GPU index order
  std::vector<TopoNic> nics;  // in the source's order
  // Uplinks that have a GPU or NIC below them; not stored (the fleet diff
  // compares GPU -> NIC wiring), only judged by the rail check.
  std::vector<TopoUplink> uplinks;

  friend bool operator==(const NodeTopology&, const NodeTopology&) = default;
};

// Pairs each GPU with its nearest NIC: paths[g][n] is GPU g -> NIC n
// (nullopt: unknown, never chosen over a known path). Ties go to a NIC on the
// GPU's NUMA node, then to the NIC with the fewest GPUs already paired (a
// board with one NIC per switch pair splits evenly), then to source order:
// the rule the sysfs pairing (PairGpusWithNics) follows. Fills gpu.nic and
// gpu.path; a GPU without any known path keeps an empty nic.
// Where a GPU or NIC sits in a PCIe tree: its CPU (root complex / NUMA
// node) and the bus ids of the switches above it, outermost first, ending
// with its own function.
struct PciPlace {
  int cpu = -1;
  std::vector<std::string> chain;
};
// NCCL's path type between two places: different CPUs SYS, only the CPU in
// common PHB, under one switch PIX, through more than one switch PXB.
TopoPath PathBetween(const PciPlace& a, const PciPlace& b);

void AssignNearestNics(NodeTopology& topology,
                       const std::vector<std::vector<std::optional<TopoPath>>>& paths);

}  // namespace fabtrack
