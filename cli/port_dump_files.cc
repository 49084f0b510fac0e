#include "cli/port_dump_files.h"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fabtrack::cli {

bool ReadTextFile(const std::string& path, std::string* text, std::ostream& err) {
  std::ifstream in(path);
  if (!in) {
    err << path << ": cannot read: " << std::strerror(errno) << "\n";
    return false;
  }
  std::stringstream buffer;
  buffer << in.rdbuf();
  *text = buffer.str();
  return true;
}

std::string HostFromFileName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

std::optional<std::string> NetdevFromFileName(const std::string& path,
                                              const std::vector<NetdevPort>& map) {
  std::string name = std::filesystem::path(path).filename().string();
  std::vector<std::string> words;
  for (size_t at = name.find('.'); at != std::string::npos;) {
    size_t next = name.find('.', at + 1);
    std::string w = name.substr(at + 1, next == std::string::npos ? next : next - at - 1);
    // Extensions and tool words are no interface: "gpu-a.md", the notes
    // pasted from a how-to, names none.
    if (!w.empty() && w != "txt" && w != "log" && w != "out" && w != "md" && w != "ethtool" &&
        w != "ethtool-S" && w != "ethtool_S" && w != "stats") {
      words.push_back(w);
    }
    at = next;
  }
  for (const std::string& w : words) {
    for (const NetdevPort& m : map) {
      if (m.netdev == w) return w;
    }
  }
  if (words.size() == 1) return words.front();
  return std::nullopt;
}

std::optional<std::vector<ParsedPortDump>> ReadPortDumpDocument(const std::string& path,
                                                                PortDumpContext context,
                                                                std::ostream& err) {
  std::string text;
  if (!ReadTextFile(path, &text, err)) return std::nullopt;
  if (!context.netdev) context.netdev = NetdevFromFileName(path, context.netdev_map);
  std::string why;
  std::optional<std::vector<ParsedPortDump>> dumps = ParsePortDumpDocument(text, context, &why);
  if (!dumps) {
    err << path << ":1: " << why << "\n";
    return std::nullopt;
  }
  bool usable = true;
  for (const ParsedPortDump& dump : *dumps) {
    const std::string of = dump.host ? " (" + *dump.host + ")" : "";
    for (const PortDumpError& e : dump.errors)
      err << path << ":" << e.line << ": " << e.message << of << "\n";
    for (const std::string& note : dump.notes) err << path << ": " << note << of << "\n";
    if (!dump.errors.empty()) usable = false;
  }
  if (!usable) return std::nullopt;
  return dumps;
}

std::optional<ParsedPortDump> ReadPortDumpFile(const std::string& path, PortDumpContext context,
                                               std::ostream& err) {
  std::optional<std::vector<ParsedPortDump>> dumps = ReadPortDumpDocument(path, context, err);
  if (!dumps) return std::nullopt;
  if (dumps->size() > 1) {
    std::string hosts;
    for (const ParsedPortDump& d : *dumps)
      hosts += (hosts.empty() ? "" : ", ") + d.host.value_or("?");
    err << path << ":1: the dumps of " << dumps->size() << " hosts (" << hosts
        << "): give one host's dumps\n";
    return std::nullopt;
  }
  return std::move(dumps->front());
}

}  // namespace fabtrack::cli
