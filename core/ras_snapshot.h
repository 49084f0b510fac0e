// `fabtrack ras watch`: a job's NCCL RAS report taken at one time, as plain
// data that crosses from the collector (collector/ras reads the report) to
// the store (schema 022) and the analyzer (the verdict over consecutive
// snapshots, analyzer/ras_watch), and that verdict. RAS names processes by
// IP address; `host` is what fabtrack mapped that address to.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/json_instances.h"
#include "core/node_topology.h"

namespace fabtrack {

// One rank of one communicator in one snapshot.
struct RasRankState {
  int rank = -1;
  std::string node;  // the IP address RAS printed
  std::string host;  // the host fabtrack mapped it to; empty when unknown
  std::string gpu;   // "1", "1 (NVML 3)"; empty when unknown
  std::optional<int64_t> pid;
  // "running", "init", "finalize", "aborted", "error", "dead",
  // "unresponsive", "missing"; "" when the report did not name this rank.
  std::string state;
  // Collective operation counts by operation ("AllReduce"; "collective" for
  // the text report's overall count), in the report's order; empty when the
  // report did not give this rank's counts (the text report names only the
  // ranks that differ).
  std::vector<std::pair<std::string, int64_t>> op_counts;
  bool operator==(const RasRankState&) const = default;
};

// One communicator in one snapshot.
struct RasCommState {
  std::string id;      // the JSON hash ("0x8c41e07a2f9d3b66") or "#0-0 (27a0...)"
  int size = 0;        // ranks; 0 when the report does not say
  std::string state;   // RUNNING, INIT, FINALIZE, ABORT; "" when unknown
  std::string errors;  // OK, MISMATCH, INCOMPLETE, DEAD, ERROR (comma-joined)
  std::vector<RasRankState> ranks;
  bool operator==(const RasCommState&) const = default;
};

struct RasSnapshot {
  std::string cluster;
  std::string job_id;
  std::string taken_at;       // RFC 3339, UTC
  double taken_at_s = 0;      // epoch seconds (not stored: taken_at is)
  std::string report_format;  // "json" | "text"
  std::string nccl_version;
  std::string health;  // the single report's verdict: healthy, warning, critical
  std::vector<RasCommState> communicators;
  bool operator==(const RasSnapshot& o) const {
    return cluster == o.cluster && job_id == o.job_id && taken_at == o.taken_at &&
           report_format == o.report_format && nccl_version == o.nccl_version &&
           health == o.health && communicators == o.communicators;
  }
};

// The communicators of a snapshot as the JSON stored with it (schema 022's
// ras_snapshots.communicators) and back. FromJson throws
// nlohmann::json::exception on a document of another shape.
nlohmann::json RasCommunicatorsJson(const std::vector<RasCommState>& comms);
std::vector<RasCommState> RasCommunicatorsFromJson(const nlohmann::json& j);

// RasCommunicatorsJson(comms).dump(indent, ' ', false, handler): the same
// bytes, written straight from the structs where every string is printable
// ASCII (all of RAS's), through the DOM otherwise. A snapshot of 10^5 ranks
// is stored and printed by `ras watch`: its DOM was a third of the watch.
// Each line after the first is prefixed with `indent_prefix` spaces (the
// depth where a pretty document holds it).
std::string RasCommunicatorsDump(
    const std::vector<RasCommState>& comms, int indent = -1, size_t indent_prefix = 0,
    nlohmann::json::error_handler_t handler = nlohmann::json::error_handler_t::strict);

// One thing the watch concluded about a job over its snapshots.
struct RasWatchRank {
  int rank = -1;
  std::string node, host, gpu;
  std::optional<int64_t> pid;
  std::string detail;  // "AllReduce 975, the majority at 977", "considered dead"
  // The GPU's nearest NIC ("mlx5_3") in the newest topology fabtrack stored
  // for the host (`topology ingest`) by the end of the watch; "" unknown.
  std::string nic;
  bool operator==(const RasWatchRank&) const = default;
};

struct RasWatchFinding {
  std::string kind;      // stuck, laggard, dead, unresponsive, missing, error, peer_dead
  std::string severity;  // "warning" | "critical"
  std::string communicator;
  std::string message;
  std::string since;  // RFC 3339: the first snapshot that showed it
  std::vector<RasWatchRank> ranks;
  // What fabtrack's port counters saw on those ranks' hosts over the watch:
  // "mlx5_3 port 1 link_downed +2 at 2026-12-05T03:12:00Z".
  std::vector<std::string> port_changes;
  // Where those hosts differ from the job's other hosts in what fabtrack
  // knows of them by the end of the watch (HCA firmware, link rate, GPU/NIC
  // wiring): "gpu-w2: link mlx5_3/1 200 Gb/s; 400 Gb/s on the job's other
  // 3 hosts".
  std::vector<std::string> node_facts;
  bool operator==(const RasWatchFinding&) const = default;
};

struct RasWatchVerdict {
  std::string health = "healthy";  // healthy, warning, critical
  int snapshots = 0;
  std::string first_taken_at, last_taken_at;
  std::vector<RasWatchFinding> findings;
  bool Stuck() const;     // a communicator named stuck
  bool PeerDead() const;  // a process RAS's event stream declared dead (kind "peer_dead")
  bool operator==(const RasWatchVerdict&) const = default;
};

nlohmann::json RasWatchVerdictJson(const RasWatchVerdict& v);
// RasWatchVerdictJson(v).dump(...), as RasCommunicatorsDump: the verdict
// of a job of 10^5 ranks mostly behind names each of them.
std::string RasWatchVerdictDump(
    const RasWatchVerdict& v, int indent = -1, size_t indent_prefix = 0,
    nlohmann::json::error_handler_t handler = nlohmann::json::error_handler_t::strict);
RasWatchVerdict RasWatchVerdictFromJson(const nlohmann::json& j);

}  // namespace fabtrack

namespace fabtrack {

// One stored counter sample of one HCA port (port_counter_samples), as the
// watch reads them for the hosts of a job's ranks over the watch window.
struct HostPortReading {
  std::string host, device;
  int port = 0;
  std::string sampled_at;  // RFC 3339
  double sampled_at_s = 0;
  std::string state;                // "ACTIVE", "DOWN"; "" when not sampled
  std::optional<double> rate_gbps;  // the link's rate as sampled
  // Error counters by their column name (link_downed, symbol_error...);
  // absent: not read on that port.
  std::vector<std::pair<std::string, std::optional<int64_t>>> counters;
};

// What fabtrack stored of a job's hosts by the end of a watch, beside their
// port samples: each host's newest GPU/NIC topology (`topology ingest`) and
// its HCAs' firmware ("fw_ver mlx5_0" -> "28.39.1002", the key of
// core/node_facts.h) with the topology's fingerprint ("topology").
struct RasHostKnowledge {
  std::map<std::string, NodeTopology> topologies;                   // by host
  std::map<std::string, std::map<std::string, std::string>> facts;  // by host
};

}  // namespace fabtrack
