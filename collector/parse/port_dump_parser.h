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
  PortDumpFormat format = PortDumpFormat::kIbstat;  // the first tool's
  // Every tool whose output the text held, in order (a node-check file:
  // ibstat, perfquery); each read from its own lines only.
  std::vector<PortDumpFormat> formats;
  // The host the document names, when it holds several hosts' dumps
  // (`==> gpu-a.txt <==`, `### host gpu-a`, `[root@gpu-a ~]# ibstat`, pdsh's
  // `gpu-a: ` prefixes); unset for one host's dump (the caller names it).
  std::optional<std::string> host;
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

// Tools' outputs are found by their telling lines wherever they are
// (prompts, banners, comments and other tools' output around them are
// skipped), each read from its own lines. A block cut short (an ibstat CA
// with fewer `Port N:` blocks than its `Number of ports`, a port block
// without its state or rate, a perfquery block without its last counters,
// the document's last line no line of the tool it ends) is an error naming
// the line, and no port is kept with nothing read. A sysfs dump is
// "PATH:VALUE" (grep -H .) or "PATH VALUE" (echo "$f $(cat $f)") lines, or
// `=== FILE ===` / `==> FILE <==` headers with the value under them (a cat
// loop, tail -n +1), FILE relative to the prompt's or a `cd` line's
// directory (else --device/--port's port), of .../infiniband/DEV/ports/N/{counters,counters_ext,
// hw_counters}/NAME, .../ports/N/{state,phys_state,rate,link_layer,lid,
// gid_attrs/ndevs/0} and .../infiniband/DEV/{node_guid,fw_ver,board_id},
// read as the live reader reads the files (collector/parse/sysfs_values.h).
// An ethtool dump keeps FlowControlStats of its statistics.
// One host's dump: a document naming several hosts is refused (why names
// them; ParsePortDumpDocument splits it).
std::optional<ParsedPortDump> ParsePortDump(std::string_view text, const PortDumpContext& context,
                                            std::string* why);

// Every host's dump of a document, in the order they first appear: one,
// with `host` unset, unless the text names two hosts or more. nullopt (and
// why) when no host's part holds a port dump fabtrack knows.
std::optional<std::vector<ParsedPortDump>> ParsePortDumpDocument(std::string_view text,
                                                                 const PortDumpContext& context,
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
// lines; banner lines before it, such as the command, are skipped): every
// statistic by its driver name. nullopt (and why) when the text has no
// "NIC statistics:" line; a line after it that is not "name: number" is an
// error with its line number, the rest still read.
std::optional<std::map<std::string, uint64_t>> ParseEthtoolStatistics(
    std::string_view text, std::vector<PortDumpError>* errors, std::string* why);

// The ethtool statistics fabtrack keeps per port: pause frames and
// per-priority counters (PFC), ECN/CNP-related names some drivers put there,
// and drops and link errors (mlx5: rx_discards_phy, rx_out_of_buffer,
// rx_crc_errors_phy, link_down_events_phy).
std::map<std::string, uint64_t> FlowControlStats(const std::map<std::string, uint64_t>& all);

}  // namespace fabtrack
