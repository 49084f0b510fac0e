// Readers of one node's GPU/NIC wiring (issue 21), text in, NodeTopology out.
// Pure; never throw; every problem is an error naming "file:line: what".
//
// 1. NCCL's topology dump (NCCL_TOPO_DUMP_FILE=system.xml, NCCL 2.7 and
//    later; the same XML NCCL_TOPO_FILE reads and cloud providers ship):
//      <system version="1|2">
//        <cpu numaid="0" affinity=... arch=... [host_hash=...]>
//          <pci busid="0000:0c:00.0" class=... link_speed="16.0 GT/s PCIe" link_width="16">
//            <pci busid=... class="0x030200" ...> <gpu dev="0" sm="80" rank="0" gdr="1"> <nvlink
//            .../> <pci busid=... class="0x020700" ...> <nic> <net name="mlx5_0" dev="0"
//            speed="200000"
//                                                          port="1" guid=... gdr="1"/>
//    Each <pci> below a <cpu> is a PCIe switch (NCCL records one node per
//    switch, skipping its downstream ports) or an endpoint. The path from a
//    GPU to a NIC follows NCCL's definition: under one switch PIX, through
//    more than one switch PXB, only the CPU in common PHB, different <cpu>
//    elements SYS. (The XML cannot tell NODE from PHB.) GPUs are named
//    "GPU<dev>".
// 2. `nvidia-smi topo -m` (also -mp): a header "GPU0 GPU1 ... NIC0 ... CPU
//    Affinity NUMA Affinity [GPU NUMA ID]", one row per device with X,
//    PIX/PXB/PHB/NODE/SYS or NV# cells, a Legend and, since about driver 470,
//    a "NIC Legend:" block naming NICk ("NIC0: mlx5_0"); older drivers put
//    the HCA name (mlx5_0) in the header itself. ANSI underline escapes
//    around the header (nvidia-smi writes them to a terminal) are dropped.
//    Pasted shapes read the same: every line commented ("# GPU0 ..."), tabs
//    turned into runs of spaces, or lost from the header so that its labels
//    run together ("GPU0GPU1mlx5_0CPU Affinity"), and the 2017 legend's SOC
//    (now SYS).
//    A PCI-only XML (cloud images' NCCL_TOPO_FILE: GPUs and NICs are <pci>
//    leaves known by class 0x0302xx / 0x0207xx or 0x0200xx, no <gpu> or
//    <net>) gives GPUs named in bus order and NICs named by bus id.
// 3. NCCL debug lines (NCCL_DEBUG=INFO, NCCL_DEBUG_SUBSYS=INIT,GRAPH): the
//    "NET/IB : Using [0]mlx5_0:1/IB ..." device list, each rank's "cudaDev N
//    nvmlDev M busId B ... Init START", "GPU Direct RDMA Disabled for HCA i
//    'mlx5_i'" and the topology search's per-GPU path lines
//    "GPU/18000 :... CPU/0 (1/24.0/PHB) NET/0 (2/24.0/PIX) ...", and the
//    system print before them ("=== System : maxBw ..." or, NCCL before 2.12
//    and RCCL, "maxWidth"; see nccl_graph_parser.cc), which alone is enough.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/node_topology.h"

namespace fabtrack {

struct ParsedNodeTopology {
  std::string format;  // "nccl_xml" | "nvidia_smi_topo" | "nccl_graph" | "" (unknown)
  // The node, when the file holds several (see ParseNodeTopologies): the log
  // lines' host, or the label before a dump ("=== node-a ===", "s114
  // nvidia-smi topo -m", "root@gpu-b02:~# nvidia-smi topo -m"); "dump2" when
  // there is none. Empty for a file of one node without a name.
  std::string host;
  NodeTopology topology;
  // "file:line: what". When any, the topology may be incomplete (a truncated
  // dump): what was read is kept, but a verdict on it is not to be trusted.
  std::vector<std::string> errors;
};

ParsedNodeTopology ParseNcclTopoXml(std::string_view text, const std::string& file);
ParsedNodeTopology ParseSmiTopoMatrix(std::string_view text, const std::string& file);
ParsedNodeTopology ParseNcclGraphLines(std::string_view text, const std::string& file);
// Every host of a log, in order of first appearance (one result with the
// error when there is none); the file's errors are on the first.
std::vector<ParsedNodeTopology> ParseNcclGraphHosts(std::string_view text, const std::string& file);

// "nccl_xml" when the text has a <system> element, "nvidia_smi_topo" when a
// line starts with "GPU0" among other column labels, "nccl_graph" when an
// NCCL INFO line holds a GPU's paths ("GPU/18000 :..."), else "".
std::string SniffTopologyFormat(std::string_view text);

// Any of the three, sniffed; an unrecognised text is one error naming the file.
// A file of several nodes gives its first.
ParsedNodeTopology ParseNodeTopology(std::string_view text, const std::string& file);

// Every node a file holds, as people post them: several <system> documents
// or several matrices one after the other (each after a line naming its
// host), or the GRAPH lines of several hosts; one result for a file of one
// node. Errors keep the file's own line numbers.
std::vector<ParsedNodeTopology> ParseNodeTopologies(std::string_view text, const std::string& file);

}  // namespace fabtrack
