// locate's topology readers (fabtrack's topology file and ibnetdiscover
// output), on any text: what comes out is consistent whatever goes in.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/parse/locate_topology_parser.h"

namespace {

// Every node has a leaf, every leaf with a spine has a node; when the parse
// is clean, formatting and reading back gives the same fabric.
void Check(const fabtrack::ParsedTopology& p) {
  const fabtrack::LocateTopology& t = p.topology;
  if (t.leaf_of.size() != t.nodes.size()) __builtin_trap();
  for (const std::string& n : t.nodes) {
    if (!t.leaf_of.count(n)) __builtin_trap();
  }
  for (const std::string& e : p.errors) {
    if (e.find(':') == std::string::npos) __builtin_trap();
  }
  if (!p.errors.empty()) return;
  // Names with blanks, ':' or '#' cannot be written in the file format.
  for (const auto& [node, leaf] : t.leaf_of) {
    for (const std::string* s : {&node, &leaf}) {
      if (s->find_first_of(" \t\r:#") != std::string::npos) return;
    }
  }
  fabtrack::ParsedTopology again =
      fabtrack::ParseLocateTopologyFile(fabtrack::FormatLocateTopology(t), "again");
  if (!again.errors.empty() || again.topology.nodes != t.nodes ||
      again.topology.leaf_of != t.leaf_of) {
    __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(fabtrack::ParseLocateTopologyFile(text, "fuzz.topology"));
  Check(fabtrack::ParseIbnetdiscover(text, "fuzz.ibnetdiscover"));
  Check(fabtrack::ParseTopology(text, "fuzz"));
  return 0;
}
