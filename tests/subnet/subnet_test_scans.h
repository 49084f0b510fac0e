// Hand-built subnet scans for the detector and JSON tests: a fat tree of
// `leaves` x `spines` with `hosts` per leaf, every port Active 4x EDR with
// zero counters, the leaves' GUIDs below the spines'.
#pragma once

#include <cstdio>
#include <string>

#include "core/fabric_scan.h"

namespace fabtrack::testing {

inline std::string Guid(int n) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%016x", n);
  return buf;
}

inline FabricScan SmallFatTree(int leaves = 2, int spines = 2, int hosts = 2,
                               const std::string& at = "2026-12-05T10:00:00Z") {
  FabricScan s;
  s.scanned_at = at;
  s.source = "mlx5_0/1";
  auto add_port = [&](const std::string& guid, int port) {
    FabricPort p;
    p.node_guid = guid;
    p.port = port;
    p.lid = 1;
    p.state = "Active";
    p.phys_state = "LinkUp";
    p.width = 4;
    p.speed = "EDR";
    p.rate_gbps = 100;
    p.counters = {{"symbol_error", 0},
                  {"link_downed", 0},
                  {"port_rcv_errors", 0},
                  {"port_xmit_discards", 0},
                  {"port_xmit_wait", 0}};
    s.ports.push_back(p);
  };
  auto leaf = [](int l) { return 0x1000 + l; };
  auto spine = [](int sp) { return 0x2000 + sp; };
  auto host = [](int h) { return 0x3000 + h; };
  for (int l = 1; l <= leaves; ++l) {
    s.nodes.push_back({Guid(leaf(l)), "leaf0" + std::to_string(l), "switch", hosts + spines, l});
    for (int p = 1; p <= hosts + spines; ++p) add_port(Guid(leaf(l)), p);
  }
  for (int sp = 1; sp <= spines; ++sp) {
    s.nodes.push_back({Guid(spine(sp)), "spine0" + std::to_string(sp), "switch", leaves, 100 + sp});
    for (int p = 1; p <= leaves; ++p) add_port(Guid(spine(sp)), p);
  }
  for (int l = 1; l <= leaves; ++l) {
    for (int h = 1; h <= hosts; ++h) {
      int n = (l - 1) * hosts + h;
      s.nodes.push_back({Guid(host(n)), "node" + std::to_string(n), "ca", 1, 200 + n});
      add_port(Guid(host(n)), 1);
      s.links.push_back({{Guid(leaf(l)), "leaf0" + std::to_string(l), h},
                         {Guid(host(n)), "node" + std::to_string(n), 1}});
    }
    for (int sp = 1; sp <= spines; ++sp) {
      s.links.push_back({{Guid(leaf(l)), "leaf0" + std::to_string(l), hosts + sp},
                         {Guid(spine(sp)), "spine0" + std::to_string(sp), l}});
    }
  }
  SortFabricScan(s);
  return s;
}

inline FabricPort& PortOf(FabricScan& s, int guid, int port) {
  for (FabricPort& p : s.ports) {
    if (p.node_guid == Guid(guid) && p.port == port) return p;
  }
  throw std::runtime_error("no such port");
}

}  // namespace fabtrack::testing
