// Port state and counters as operators already collect them, from the text
// of `ibstat`, `ibstatus`, `perfquery` (with or without -x) and
// `ibv_devinfo [-v]`, into the same HostPorts that live sysfs reads give
// (core/port_sample.h): sysfs state words and codes ("4: ACTIVE" ->
// ACTIVE/4), rates in Gb/s, counters under their sysfs names
// (PortXmitData -> port_xmit_data, data counters as 4-octet words, bytes
// derived). Pure: text in, struct out; errors name the line.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

enum class PortDumpFormat { kIbstat, kIbstatus, kPerfquery, kIbvDevinfo };
const char* PortDumpFormatName(PortDumpFormat format);  // "ibstat", ...

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
};

// `device` names the HCA of a perfquery dump, which prints only LID and port
// (a "perfquery ... -C mlx5_0" command line in the dump names it too).
std::optional<ParsedPortDump> ParsePortDump(std::string_view text,
                                            const std::optional<std::string>& device,
                                            std::string* why);

// `ethtool -S NETDEV` output ("NIC statistics:" then "     name: value"
// lines): every statistic by its driver name. nullopt (and why) when the
// text is not that; a line that is not "name: number" is an error with its
// line number, the rest still read.
std::optional<std::map<std::string, uint64_t>> ParseEthtoolStatistics(
    std::string_view text, std::vector<PortDumpError>* errors, std::string* why);

}  // namespace fabtrack
