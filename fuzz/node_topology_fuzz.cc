// The node topology readers (NCCL topology XML, `nvidia-smi topo -m`, NCCL
// GRAPH debug lines, files of several nodes), the rail check and the host
// diff, on any text: no crash, every error
// names the file, and every GPU's NIC is one of the node's NICs.
#include <cstddef>
#include <cstdint>
#include <set>
#include <string_view>

#include "analyzer/topology/host_diff.h"
#include "analyzer/topology/rail_check.h"
#include "collector/parse/node_topology_parser.h"

namespace {

void Check(const fabtrack::ParsedNodeTopology& p, std::string_view file) {
  for (const std::string& e : p.errors) {
    if (e.rfind(std::string(file) + ":", 0) != 0) __builtin_trap();
  }
  std::set<std::string> nics;
  for (const fabtrack::TopoNic& n : p.topology.nics) nics.insert(n.name);
  for (const fabtrack::TopoGpu& g : p.topology.gpus) {
    if (g.nic.empty() != !g.path) __builtin_trap();
    if (!g.nic.empty() && !nics.count(g.nic)) __builtin_trap();
  }
  for (const fabtrack::TopologyFinding& f : fabtrack::CheckRails(p.topology)) {
    if (f.kind.empty() || f.message.empty()) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(fabtrack::ParseNcclTopoXml(text, "fuzz.xml"), "fuzz.xml");
  Check(fabtrack::ParseSmiTopoMatrix(text, "fuzz.txt"), "fuzz.txt");
  Check(fabtrack::ParseNcclGraphLines(text, "fuzz.log"), "fuzz.log");
  Check(fabtrack::ParseNodeTopology(text, "fuzz"), "fuzz");
  // A file of several nodes: each node checked, and what differs between
  // them always names a host.
  std::vector<fabtrack::ParsedNodeTopology> nodes = fabtrack::ParseNodeTopologies(text, "many");
  if (nodes.empty()) __builtin_trap();
  std::vector<std::pair<std::string, const fabtrack::NodeTopology*>> hosts;
  for (const fabtrack::ParsedNodeTopology& p : nodes) {
    Check(p, "many");
    hosts.push_back({p.host, &p.topology});
  }
  for (const auto& per_host : fabtrack::DiffHosts(hosts)) {
    for (const fabtrack::TopologyFinding& f : per_host) {
      if (f.message.empty()) __builtin_trap();
    }
  }
  return 0;
}
