// What `fabtrack ras watch` keeps of one RAS report (core/ras_snapshot.h):
// per communicator its state, errors and each rank's collective counts and
// state, from the JSON report (every rank) or the text report (the ranks it
// names: those that differ). And the mapping of RAS's node IP addresses to
// host names: an explicit hosts file (hosts(5): "IP name [alias...]"), then
// what the caller resolved. Pure.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "collector/ras/ras_report.h"
#include "core/ras_snapshot.h"

namespace fabtrack::ras {

std::vector<RasCommState> CommunicatorsOf(const Report& report);

// Every node address the communicators name, once, sorted.
std::vector<std::string> NodesOf(const std::vector<RasCommState>& comms);

// Sets each rank's host from `host_of` (node IP -> host); ranks of an
// unknown address keep an empty host.
void MapHosts(const std::map<std::string, std::string>& host_of, std::vector<RasCommState>* comms);

struct HostsFile {
  std::map<std::string, std::string> host_of;  // address -> first name
  std::vector<std::string> problems;           // "PATH:LINE: ..."
};

// hosts(5) text: "10.9.0.1 gpu-n1 gpu-n1.cluster" (the first name is the
// host), '#' comments, blank lines; a line without a name is a problem.
HostsFile ParseHostsFile(std::string_view text, const std::string& path);

}  // namespace fabtrack::ras
