// Port dump files as `fabtrack import` and `check node --ports-from` read
// them: the file's text, parsed (collector/parse/port_dump_parser.h), every
// problem printed as FILE:LINE.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/parse/port_dump_parser.h"

namespace fabtrack::cli {

// The whole file; false (reason printed) when it cannot be read.
bool ReadTextFile(const std::string& path, std::string* text, std::ostream& err);

// "gpu-b07.ibstat.txt" -> "gpu-b07": dumps are usually saved per host.
std::string HostFromFileName(const std::string& path);

// The interface of an `ethtool -S` dump from its name, "gpu-b07.ens1f0np0.ethtool.txt":
// the one word after the host that is not a tool or file suffix (with a
// netdev map: the word the map knows).
std::optional<std::string> NetdevFromFileName(const std::string& path,
                                              const std::vector<NetdevPort>& map);

// One dump file parsed with `context` (its netdev from the file name unless
// the context names one): every host's dump in it (one unless the file
// names several hosts). nullopt when it cannot be used: unreadable, not a
// dump, or a line of it not what its format says or cut off (each printed
// FILE:LINE). Notes are printed, not failures.
std::optional<std::vector<ParsedPortDump>> ReadPortDumpDocument(const std::string& path,
                                                                PortDumpContext context,
                                                                std::ostream& err);

// As ReadPortDumpDocument, for a file of one host: one naming several hosts
// is unusable (printed).
std::optional<ParsedPortDump> ReadPortDumpFile(const std::string& path, PortDumpContext context,
                                               std::ostream& err);

}  // namespace fabtrack::cli
