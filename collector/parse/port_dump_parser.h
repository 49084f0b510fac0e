// Port state and counters as operators already collect them, from the text
// of `ibstat`, `ibstatus`, `perfquery` (with or without -x) and
// `ibv_devinfo [-v]`, `ethtool -S NETDEV` and saved sysfs files
// (`grep -H . /sys/class/infiniband/*/ports/*/counters/*`), into the same HostPorts that live sysfs
// reads give (core/port_sample.h): sysfs state words and codes ("4: ACTIVE" -> ACTIVE/4), rates in
// Gb/s, counters under their sysfs names (PortXmitData -> port_xmit_data, data counters as 4-octet
// words, bytes derived). Pure: text in, struct out; errors name the line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

enum class PortDumpFormat { kIbstat, kIbstatus, kPerfquery, kIbvDevinfo, kEthtool, kSysfs };
const char* PortDumpFormatName(PortDumpFormat format);  // "ibstat", ..., "ethtool -S", "sysfs"

// Which tool wrote `text`, from its first telling line; nullopt: none.
std::optional<PortDumpFormat> SniffPortDump(std::string_view text);

struct PortDumpError {
  int line = 0;
  std::string message;
};

struct ParsedPortDump {
  PortDumpFormat format = PortDumpFormat::kIbstat;
  std::vector<PortSample> ports;
  std::vector<PortDumpError> errors;
  // What the reader should know but is no error ("eth0 has no HCA: stored
  // as device eth0 port 1").
  std::vector<std::string> notes;
};

// One line of `ibdev2netdev` ("mlx5_0 port 1 ==> ens1f0np0 (Up)", or -v's
// "0000:3b:00.0 mlx5_0 (MT4123 - ...) fw 20.28.1002 port 1 (ACTIVE) ==> ib0 (Up)").
struct NetdevPort {
  std::string device;
  int port = 0;
  std::string netdev;

  friend bool operator==(const NetdevPort&, const NetdevPort&) = default;
};

// Every mapping of an ibdev2netdev output; a line that is not one is an
// error with its number.
std::vector<NetdevPort> ParseIbdev2netdev(std::string_view text,
                                          std::vector<PortDumpError>* errors);

// What the text itself cannot say. perfquery prints only LID and port: the
// HCA is `device` (or a "perfquery ... -C mlx5_0" command line in the dump).
// `ethtool -S` prints neither interface nor HCA: the port is `device` and
// `port` (default 1) when given, else `netdev`'s entry in `netdev_map`, else
// `netdev` itself as the device, port 1 (a note says so).
struct PortDumpContext {
  std::optional<std::string> device;
  std::optional<int> port;
  std::optional<std::string> netdev;
  std::vector<NetdevPort> netdev_map;
};

// A sysfs dump is "PATH:VALUE" (grep -H .) or "PATH VALUE" (echo "$f $(cat
// $f)") lines of .../infiniband/DEV/ports/N/{counters,counters_ext,
// hw_counters}/NAME, .../ports/N/{state,phys_state,rate,link_layer,lid,
// gid_attrs/ndevs/0} and .../infiniband/DEV/{node_guid,fw_ver,board_id},
// read as the live reader reads the files (collector/parse/sysfs_values.h).
// An ethtool dump keeps FlowControlStats of its statistics.
std::optional<ParsedPortDump> ParsePortDump(std::string_view text, const PortDumpContext& context,
                                            std::string* why);
inline std::optional<ParsedPortDump> ParsePortDump(std::string_view text,
                                                   const std::optional<std::string>& device,
                                                   std::string* why) {
  return ParsePortDump(text, PortDumpContext{.device = device}, why);
}

// Adds a dump's ports to `into`: a port already there (ibstat's state, then
// perfquery's counters of the same port) is filled with what it lacked, the
// counter maps joined; others are appended.
void AddDumpPorts(const std::vector<PortSample>& ports, HostPorts* into);

// `ethtool -S NETDEV` output ("NIC statistics:" then "     name: value"
// lines): every statistic by its driver name. nullopt (and why) when the
// text is not that; a line that is not "name: number" is an error with its
// line number, the rest still read.
std::optional<std::map<std::string, uint64_t>> ParseEthtoolStatistics(
    std::string_view text, std::vector<PortDumpError>* errors, std::string* why);

// The ethtool statistics fabtrack keeps per port: pause frames and
// per-priority counters (PFC), ECN/CNP-related names some drivers put there,
// and drops and link errors (mlx5: rx_discards_phy, rx_out_of_buffer,
// rx_crc_errors_phy, link_down_events_phy).
std::map<std::string, uint64_t> FlowControlStats(const std::map<std::string, uint64_t>& all);

}  // namespace fabtrack
