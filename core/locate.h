// `fabtrack locate`: what it knows of the fabric, what it measured, and what
// it concluded. Plain data: the topology parser fills LocateTopology, the
// harness fills LocateProbe, the analyzer's planner and verdict
// (analyzer/locate/) read them and write LocateVerdict.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

// Nodes and, when known, the two-tier fabric they hang off: each node's leaf
// switch and each leaf's spine (its uplink is named "<leaf>-<spine>", as
// scripts/netns-fabric.sh names its veth). Without a topology every node is
// its own island: locate still names nodes, never uplinks.
struct LocateTopology {
  std::vector<std::string> nodes;
  std::map<std::string, std::string> leaf_of;   // node -> leaf
  std::map<std::string, std::string> spine_of;  // leaf -> spine
  bool HasLeaves() const { return !leaf_of.empty(); }
};

// One short test: a point-to-point pair (2 members) or an all-reduce of a
// group, one rank per node; members index LocateTopology::nodes. A one-way
// probe is a pair whose bandwidth was measured in one direction only,
// members[0] sending to members[1] (`fabtrack locate` measures each pair both
// ways, as two one-way probes): a fault in one direction of a link (a leaf's
// uplink toward its spine) then slows only the probes that send across it.
struct LocateProbe {
  std::vector<int> members;
  int round = 0;
  double busbw_gbps = 0;        // large message
  double small_latency_us = 0;  // small message
  bool one_way = false;
};

struct LocateSuspect {
  std::string kind;  // "node" | "uplink" | "link"
  std::string name;  // "node7", "leaf2-spine", "node3<->node9" (one-way: "node3->node9")
  double score = 0;  // robust z of the convicting measurements (higher: surer)
  std::vector<std::string> evidence;
  bool operator==(const LocateSuspect&) const = default;
};

struct LocateVerdict {
  std::vector<LocateSuspect> suspects;  // most likely first; empty: no fault found
  // One explanation fits every measurement (or none is needed: every probe
  // is within the healthy spread). Not settled without suspects: something
  // was slow, or too little was measured, and the budget ran out.
  bool settled = false;
  int rounds = 0;
  // The measured spread of healthy probes (scaled MAD / median), for "no
  // fault found" to say how closely it looked.
  double busbw_spread = 0, latency_spread = 0;
  // How far the verdict can be trusted, 0..1 (analyzer/locate/locate_verdict.cc,
  // README): the share of measurements not taken for flukes x how plain the
  // evidence is x (settled ? 1 : 1/2 shared among the suspects).
  double confidence = 0;
  // Gross slow measurements that later ones cleared, each said in words.
  std::vector<std::string> notes;
  bool operator==(const LocateVerdict&) const = default;
};

// One locate as stored (`fabtrack locate --cluster`, schema 011): the
// verdict, where and when it was reached, and the runs it was run for (the
// night's flagged runs, or a sweep's). What the spool keeps when the database
// is away (core/locate_json.h) and what the analyzer reads back.
struct LocateRecord {
  std::string cluster;
  std::string located_at;          // ISO 8601 UTC (clock.h), when it finished
  std::vector<std::string> hosts;  // in the order given
  LocateVerdict verdict;
  double seconds = 0;
  int probes = 0;             // one-way probes measured
  int exit_status = 0;        // 0 no suspect, 1 warning, 2 critical (`locate`'s exit)
  bool budget_spent = false;  // stopped by --budget before it settled
  std::optional<std::string> sweep_id;
  std::vector<int64_t> run_ids;  // linked runs (those of sweep_id are linked too)
  bool operator==(const LocateRecord&) const = default;
};

}  // namespace fabtrack
