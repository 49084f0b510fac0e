// The rail check (issue 21): on a rail-optimized server every GPU has its own
// NIC under its own PCIe switch (PIX or PXB), with GPUDirect RDMA, and all
// GPUs and NICs run at the same PCIe and port rates. Pure: one node's
// NodeTopology in, findings out, in a stable order (critical first).
//
//   kind           severity   when
//   no_nic         critical   the node has GPUs but no NIC (NCCL falls back
//                             to sockets), or a GPU has no known path to one
//   shared_nic     warning    two or more GPUs have the same nearest NIC
//   nic_far        warning    a GPU's nearest NIC is PHB or NODE: NCCL's
//                  critical   default GDR level stops at PXB, so traffic
//                             stages through host memory; SYS also crosses
//                             the CPU interconnect
//   gdr_off        warning    the GPU or its NIC cannot do GPUDirect RDMA
//   link_degraded  warning    a GPU's or rail NIC's PCIe width or speed, or a
//                             rail NIC's port rate, is below what most of its
//                             peers have; or a switch's or bridge's uplink
//                             above a GPU or rail NIC is narrower, slower or
//                             (GRAPH print) of less bandwidth than the links
//                             below it: the finding names both of its ends
#pragma once

#include <vector>

#include "core/node_topology.h"
#include "core/topology_finding.h"

namespace fabtrack {

std::vector<TopologyFinding> CheckRails(const NodeTopology& topology);

}  // namespace fabtrack
