// One reading of an RDMA port (InfiniBand or RoCE) from sysfs: state, rate
// and every counter, normalised while read. Plain data; absent is nullopt.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

// The IBA PortCounters error counters under their sysfs counters/ names, in
// the order the schema's port_counter_samples columns have them.
inline constexpr const char* kPortErrorCounters[] = {
    "symbol_error",
    "link_error_recovery",
    "link_downed",
    "port_rcv_errors",
    "port_rcv_remote_physical_errors",
    "port_rcv_switch_relay_errors",
    "port_xmit_discards",
    "port_xmit_constraint_errors",
    "port_rcv_constraint_errors",
    "local_link_integrity_errors",
    "excessive_buffer_overrun_errors",
    "VL15_dropped",
};

struct PortSample {
  // Special members out of line (the .cc, `= default`): this struct is in most
  // of the project's units, and the implicit ones were compiled again in each
  // (BENCHMARKS.md, "Fresh build CPU", round seven). Declaring them ends
  // aggregate initialisation: set the fields after construction.
  PortSample();
  PortSample(const PortSample&);
  PortSample(PortSample&&) noexcept;
  PortSample& operator=(const PortSample&);
  PortSample& operator=(PortSample&&) noexcept;
  ~PortSample();

  std::string device;  // "mlx5_0"
  int port = 0;
  std::optional<std::string> link_layer;  // "InfiniBand" | "Ethernet"
  std::optional<std::string> state;       // "ACTIVE" (from "4: ACTIVE")
  std::optional<int> state_code;          // 4
  std::optional<std::string> phys_state;  // "LinkUp" (from "5: LinkUp")
  std::optional<int> phys_state_code;     // 5
  std::optional<double> rate_gbps;        // "100 Gb/sec (4X EDR)" -> 100
  std::optional<std::string> rate_text;   // as read, e.g. "100 Gb/sec (4X EDR)"
  std::optional<std::string> lid;         // "0x12"
  std::optional<std::string> netdev;      // RoCE: "ens1f0np0" (from the GID/ndevs mapping)
  std::optional<std::string> node_guid, fw_version, board_id;  // device-level files
  // Every file of counters/ (and counters_ext/ on old kernels), raw as read.
  // A file that reads "N/A (no PMA)", is missing or unreadable is absent.
  std::map<std::string, uint64_t> counters;
  // hw_counters/ (mlx5: np_cnp_sent, rp_cnp_handled, out_of_buffer, ...).
  std::map<std::string, uint64_t> hw_counters;
  // RoCE: the netdev's flow-control statistics from the ethtool ioctl (PFC
  // pause and per-priority counters), when the netdev exists on this host.
  std::map<std::string, uint64_t> ethtool;
  // Normalised data counters: port_{xmit,rcv}_data count 4-octet words.
  std::optional<uint64_t> xmit_bytes, rcv_bytes;
  // Legacy narrow counters read at their maximum (stuck, not zero deltas).
  std::vector<std::string> saturated;

  friend bool operator==(const PortSample&, const PortSample&) = default;
};

struct PortProblem {
  std::string path;     // the file or directory concerned
  std::string message;  // "device vanished while reading", ...

  friend bool operator==(const PortProblem&, const PortProblem&) = default;
};

struct HostPorts {
  std::string host;
  std::vector<PortSample> ports;
  std::vector<PortProblem> problems;
  // uname's release of the host that read the ports (core/node_facts.h); a
  // reader of a fake tree leaves it to its caller.
  std::optional<std::string> kernel_release;

  friend bool operator==(const HostPorts&, const HostPorts&) = default;
};

struct CounterDelta {
  std::string device;
  int port = 0;
  std::string counter;  // sysfs name, hw_counters prefixed "hw:", "xmit_bytes"/"rcv_bytes"
  std::optional<uint64_t> delta;  // absent: missing in a sample, or saturated
  std::optional<double> per_second;
  bool saturated = false;
  bool reset_seen = false;
};

struct PortDeltas {
  std::vector<CounterDelta> deltas;
  // Ports present in only one sample (a device that vanished or appeared).
  std::vector<std::string> unmatched_ports;
};

}  // namespace fabtrack
