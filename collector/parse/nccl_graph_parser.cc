// One node's wiring from NCCL debug lines (NCCL_DEBUG=INFO with the INIT and
// GRAPH subsystems), see node_topology_parser.h. What it reads:
//   "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ..."   NICs by index
//   "NET/Socket : Using [0]eth0:10.0.0.1<0>"                         (socket nets)
//   "... GPU Direct RDMA Disabled for HCA 1 'mlx5_1' ..."             a NIC without GDR
//   "... cudaDev 1 nvmlDev 4 busId 87000 ... Init START"             a GPU's index
//   "GPU/87000 :GPU/87000 (0/5000.0/LOC) ... CPU/1 (1/24.0/PHB) NET/0 (2/24.0/PIX) ..."
// The last are the GPU's paths from NCCL's topology search (ids may carry
// a "<system>-" prefix since 2.19: "GPU/0-87000"). Only the first host's lines
// count: a job's log holds every node's.
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <map>

#include "collector/parse/nccl_log_line.h"
#include "collector/parse/node_topology_parser.h"

namespace fabtrack {
namespace {

std::vector<std::string_view> Fields(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && s[i] == ' ') ++i;
    size_t start = i;
    while (i < s.size() && s[i] != ' ') ++i;
    if (i > start) out.push_back(s.substr(start, i - start));
  }
  return out;
}

std::optional<int64_t> Int(std::string_view s, int base = 10) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "0-87000" -> "87000" (the system id prefix of multi-node NVLink builds).
std::string_view Id(std::string_view id) {
  size_t dash = id.find('-');
  return dash == std::string_view::npos ? id : id.substr(dash + 1);
}

// NCCL's busId as printed (hex of "DDDD:BB:dd.f" without separators).
std::string BusId(std::string_view hex) {
  std::optional<int64_t> v = Int(hex, 16);
  if (!v) return "";
  char buf[32];
  snprintf(buf, sizeof buf, "%04llx:%02llx:%02llx.%llx", static_cast<unsigned long long>(*v >> 20),
           static_cast<unsigned long long>((*v >> 12) & 0xff),
           static_cast<unsigned long long>((*v >> 4) & 0xff),
           static_cast<unsigned long long>(*v & 0xf));
  return buf;
}

// NCCL's path types (graph/topo.h) on the nvidia-smi scale; PXN (through
// another GPU's NVLink) and NVL/LOC/NET are not a GPU's own PCIe path.
std::optional<TopoPath> PathOf(std::string_view type) {
  if (type == "P2C") return TopoPath::kPhb;  // GPU -> C2C -> CPU -> NIC (Grace)
  return TopoPathFromName(type);
}

}  // namespace

ParsedNodeTopology ParseNcclGraphLines(std::string_view text, const std::string& file) {
  ParsedNodeTopology out;
  out.format = "nccl_graph";
  struct GpuPaths {
    std::optional<int> numa;
    std::map<int64_t, std::optional<TopoPath>> net;
  };
  struct HostLines {
    std::map<int64_t, std::pair<std::string, std::optional<int>>> nets;  // index -> name, port
    std::map<std::string, bool> nic_gdr;
    std::map<std::string, int64_t> index_of_bus;  // "87000" -> nvmlDev
    std::map<std::string, GpuPaths> gpus;         // by bus hex
  };
  std::map<std::string, HostLines> hosts;
  std::optional<std::string> first;  // the first host with a path line
  int number = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    std::string_view raw = text.substr(0, nl);
    text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
    ++number;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    std::optional<NcclLogLine> line = SplitNcclLogLine(raw);
    if (!line || line->level != "INFO") continue;
    const std::string_view m = line->message;
    const bool path_line = m.substr(0, 4) == "GPU/" && m.find(" :") != std::string_view::npos;
    if (!first && path_line) first = line->host;
    if (hosts.size() >= 4096 && !hosts.count(line->host)) continue;
    HostLines& h = hosts[line->host];

    if (size_t at = m.find(" : Using "); at != std::string_view::npos && m.substr(0, 4) == "NET/") {
      h.nets.clear();
      for (std::string_view f : Fields(m.substr(at + 9))) {
        if (f.size() < 4 || f[0] != '[') continue;
        size_t close = f.find(']');
        std::optional<int64_t> index =
            close == std::string_view::npos ? std::nullopt : Int(f.substr(1, close - 1));
        if (!index) continue;  // "[RO]"
        std::string_view rest = f.substr(close + 1);
        size_t colon = rest.find(':');
        std::string name(rest.substr(0, colon));
        std::optional<int> port;
        if (colon != std::string_view::npos && m.substr(0, 7) == "NET/IB ") {
          std::string_view p = rest.substr(colon + 1);
          std::optional<int64_t> v = Int(p.substr(0, p.find('/')));
          if (v && *v < 1 << 16) port = static_cast<int>(*v);
        }
        if (!name.empty()) h.nets[*index] = {name, port};
      }
      continue;
    }
    if (size_t at = m.find("GPU Direct RDMA "); at != std::string_view::npos) {
      size_t q = m.find('\'', at);
      size_t q2 = q == std::string_view::npos ? q : m.find('\'', q + 1);
      if (q2 != std::string_view::npos && m.find("for HCA", at) != std::string_view::npos) {
        h.nic_gdr[std::string(m.substr(q + 1, q2 - q - 1))] = m.substr(at + 16, 7) == "Enabled";
      }
      continue;
    }
    if (m.find("Init START") != std::string_view::npos) {
      std::vector<std::string_view> f = Fields(m);
      std::optional<int64_t> dev;
      std::string bus;
      for (size_t i = 0; i + 1 < f.size(); ++i) {
        if (f[i] == "nvmlDev" || (f[i] == "cudaDev" && !dev)) dev = Int(f[i + 1]);
        if (f[i] == "busId") bus = std::string(f[i + 1]);
      }
      if (dev && !bus.empty()) h.index_of_bus[bus] = *dev;
      continue;
    }
    if (!path_line) continue;
    size_t colon = m.find(" :");
    std::string bus(Id(m.substr(4, colon - 4)));
    GpuPaths& g = h.gpus[bus];
    // Entries: "TYPE/id (hops/bw/PATH)"; the first may be glued to ':'.
    std::vector<std::string_view> e = Fields(m.substr(colon + 2));
    if (!e.empty() && e[0].substr(0, 1) == ":") e[0].remove_prefix(1);
    for (size_t i = 0; i + 1 < e.size(); i += 2) {
      std::string_view node = e[i], info = e[i + 1];
      size_t last = info.rfind('/');
      if (info.size() < 3 || info.front() != '(' || info.back() != ')' ||
          last == std::string_view::npos) {
        out.errors.push_back(file + ":" + std::to_string(number) + ": cannot read path entry '" +
                             std::string(node) + " " + std::string(info) + "'");
        break;
      }
      std::string_view type = info.substr(last + 1, info.size() - last - 2);
      if (node.substr(0, 4) == "NET/") {
        std::optional<int64_t> n = Int(Id(node.substr(4)));
        if (n) g.net[*n] = PathOf(type);
      } else if (node.substr(0, 4) == "CPU/" && type == "PHB") {
        std::optional<int64_t> c = Int(Id(node.substr(4)));
        if (c && *c < 1 << 20) g.numa = static_cast<int>(*c);
      }
    }
    if (out.errors.size() > 100) break;
  }

  if (!first) {
    out.errors.push_back(file +
                         ":1: no GPU path lines (\"GPU/<busId> :... NET/0 (.../PIX)\"): "
                         "run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,GRAPH");
    return out;
  }
  HostLines& h = hosts[*first];
  auto& nets = h.nets;
  auto& gpus = h.gpus;
  NodeTopology& t = out.topology;
  std::vector<int64_t> net_index;
  for (const auto& [index, name_port] : nets) {
    TopoNic n;
    n.name = name_port.first;
    n.port = name_port.second;
    if (auto it = h.nic_gdr.find(n.name); it != h.nic_gdr.end()) n.gdr = it->second;
    t.nics.push_back(std::move(n));
    net_index.push_back(index);
  }
  // NICs that paths name but no "Using" line listed keep NCCL's index.
  for (const auto& [bus, g] : gpus) {
    for (const auto& [index, path] : g.net) {
      if (nets.count(index)) continue;
      nets[index] = {"NET/" + std::to_string(index), std::nullopt};
      TopoNic n;
      n.name = "NET/" + std::to_string(index);
      t.nics.push_back(std::move(n));
      net_index.push_back(index);
    }
  }
  // GPUs in index order (bus order where an index is unknown).
  std::vector<std::pair<int64_t, std::string>> order;
  int64_t unknown = 1 << 20;
  for (const auto& [bus, g] : gpus) {
    auto it = h.index_of_bus.find(bus);
    order.push_back({it != h.index_of_bus.end() ? it->second : unknown++, bus});
  }
  std::sort(order.begin(), order.end());
  std::vector<std::vector<std::optional<TopoPath>>> paths;
  for (const auto& [index, bus] : order) {
    const GpuPaths& g = gpus[bus];
    TopoGpu gpu;
    gpu.name = index < (1 << 20) ? "GPU" + std::to_string(index) : "GPU/" + bus;
    gpu.bus_id = BusId(bus);
    gpu.numa_node = g.numa;
    t.gpus.push_back(std::move(gpu));
    std::vector<std::optional<TopoPath>> row;
    for (int64_t n : net_index) {
      auto it = g.net.find(n);
      row.push_back(it == g.net.end() ? std::nullopt : it->second);
    }
    paths.push_back(std::move(row));
  }
  AssignNearestNics(t, paths);
  return out;
}

}  // namespace fabtrack
