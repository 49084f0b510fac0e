// Where GPUs and RDMA NICs sit in the PCIe tree, read from sysfs: every
// function of <root>/bus/pci/devices/<bdf> (a symlink into
// <root>/devices/pciDDDD:BB/<root port>/.../<bdf>) and the PCI function behind
// each <root>/class/infiniband/<dev>/device. The resolved path below
// devices/ is the chain of bridges from the root complex down, so two
// functions share a PCIe switch exactly when their chains share a bridge.
// The reader is the only I/O; pairing GPUs with NICs is pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/node_topology.h"

namespace fabtrack {

struct PciFunction {
  std::string bdf;  // "0000:1a:00.0"
  // Components of the resolved path below <root>/devices, root complex
  // first: {"pci0000:15", "0000:15:01.0", ..., "0000:1a:00.0"}.
  std::vector<std::string> chain;
  std::optional<int> numa_node;  // absent: no numa_node file, or -1
  std::string vendor;            // "0x10de"
  std::string device_class;      // "0x030200"
  // The PCIe link this function reports (current_link_speed/_width) and the
  // most it supports (max_link_*); absent where sysfs has no such file or
  // says "Unknown" (a function behind a non-PCIe bridge, a VM's virtual bus).
  // A port reports the link on its own side of the tree: an endpoint or a
  // switch's upstream port the link above it, a root or downstream port the
  // link below it, so each link is read from both its ends alike.
  std::optional<double> link_gts, max_link_gts;  // 16.0 (Gen4), 32.0 (Gen5)
  std::optional<int> link_width, max_link_width;

  friend bool operator==(const PciFunction&, const PciFunction&) = default;
};

struct PciHca {
  std::string name;  // "mlx5_0"
  PciFunction pci;

  friend bool operator==(const PciHca&, const PciHca&) = default;
};

struct PciTopology {
  std::vector<PciFunction> gpus;  // sorted by BDF
  std::vector<PciHca> hcas;       // natural order of names
  // The ports on the way from each root complex down to a GPU or an HCA
  // (root ports, switch ports), by BDF: where a narrow or slow uplink sits.
  std::vector<PciFunction> bridges;
  // Paths that could not be resolved (dangling device links, a link that
  // leaves the tree), with why.
  std::vector<std::string> problems;

  friend bool operator==(const PciTopology&, const PciTopology&) = default;
};

// NVIDIA GPUs are vendor 0x10de with class 0x0300xx (VGA) or 0x0302xx (3D
// controller); NVSwitches (0x0680xx) and audio functions are not GPUs.
bool IsNvidiaGpu(const PciFunction& f);

PciTopology ReadPciTopology(const std::string& sysfs_root);

// How a GPU reaches a NIC, in nvidia-smi topo / NCCL path terms: the one
// path scale of every topology source (core/node_topology.h).
using PciPath = TopoPath;
inline const char* PciPathName(PciPath p) { return TopoPathName(p); }
PciPath ClassifyPath(const PciFunction& a, const PciFunction& b);

// Length of the common prefix of two chains: the depth of the deepest shared
// bridge (0: different root complexes).
size_t CommonDepth(const PciFunction& a, const PciFunction& b);

struct GpuNicPair {
  std::string gpu;  // BDF
  std::optional<int> gpu_numa;
  std::string nic;  // HCA name; empty when there is no NIC at all
  PciPath path = PciPath::kSys;

  friend bool operator==(const GpuNicPair&, const GpuNicPair&) = default;
};

// Each GPU's nearest NIC among `nics`: the deepest common ancestor in the
// PCIe tree; ties go to a NIC on the GPU's NUMA node, then to the NIC with the
// fewest GPUs already paired (so a board with one NIC per switch pair splits
// evenly), then to name order. In GPU order.
std::vector<GpuNicPair> PairGpusWithNics(const std::vector<PciFunction>& gpus,
                                         const std::vector<PciHca>& nics);

// The same node in the model every topology source shares (NCCL's dump,
// nvidia-smi topo -m): GPUs named GPU0.. in bus order (nvidia-smi's and, with
// CUDA_DEVICE_ORDER=PCI_BUS_ID, CUDA's numbering), each with its nearest NIC
// as PairGpusWithNics pairs them. sysfs says nothing of GDR or port rates.
// Links: each GPU's and NIC's own (and the most its device supports), and
// each switch's uplink (the link above a switch's upstream port, read at
// that port) against the best link just below the switch, for the rail
// check's link_degraded.
NodeTopology ToNodeTopology(const PciTopology& topology);

}  // namespace fabtrack
