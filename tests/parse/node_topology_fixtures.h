// Shared by the node-topology parser tests: a fixture of tests/fixtures/
// topology/node read whole, its parse, and a one-line view of every GPU's
// NIC pairing for assertions over all of them at once.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

#include "collector/parse/node_topology_parser.h"

namespace fabtrack::topology_fixtures {

inline std::string Fixture(const std::string& name) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/topology/node/" + name, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  EXPECT_FALSE(s.str().empty()) << name;
  return s.str();
}

inline ParsedNodeTopology Parse(const std::string& name) {
  return ParseNodeTopology(Fixture(name), name);
}

inline std::string FirstError(const ParsedNodeTopology& p) {
  return p.errors.empty() ? std::string() : p.errors.front();
}

// "GPU0>mlx5_0/PIX GPU1>..." for one assertion over every pairing.
inline std::string Pairs(const NodeTopology& t) {
  std::string out;
  for (const TopoGpu& g : t.gpus) {
    out += (out.empty() ? "" : " ") + g.name + ">" + (g.nic.empty() ? "-" : g.nic) + "/" +
           (g.path ? TopoPathName(*g.path) : "-");
  }
  return out;
}

}  // namespace fabtrack::topology_fixtures
