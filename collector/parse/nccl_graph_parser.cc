// One node's wiring from NCCL debug lines (NCCL_DEBUG=INFO with the INIT and
// GRAPH subsystems), see node_topology_parser.h. What it reads:
//   "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE [RO]; OOB ..."   NICs by index
//   "NET/Socket : Using [0]eth0:10.0.0.1<0>"                         (socket nets)
//   "... GPU Direct RDMA Disabled for HCA 1 'mlx5_1' ..."             a NIC without GDR
//   "... cudaDev 1 nvmlDev 4 busId 87000 ... Init START"             a GPU's index
//   "GPU/87000 :GPU/87000 (0/5000.0/LOC) ... CPU/1 (1/24.0/PHB) NET/0 (2/24.0/PIX) ..."
// The last are the GPU's paths from NCCL's topology search (ids may carry
// a "<system>-" prefix since 2.19: "GPU/0-87000"; they are hexadecimal).
// And the system print before them (ncclTopoPrint), one tree per CPU, each
// level indented to where its parent's name starts:
//   "=== System : maxBw 48.0 totalBw 370.8 ==="   ("maxWidth .. totalWidth":
//                                                 NCCL before 2.12, RCCL)
//   "CPU/0-0 (1/2/-1)"
//   "+ SYS[16.0] - CPU/0-1"
//   "+ PCI[0.2] - PCI/0-65000 (104c823200000000)"   a switch, its uplink 0.2 GB/s
//   "             + PCI[48.0] - NIC/0-67000"
//   "                           + NET[50.0] - NET/0-c (0/d4f9fc0003ae6d94/1/50.000000)"
//   "             + PCI[48.0] - GPU/0-68000 (8)"    (8): the GPU's rank
//   "                           + NVL[370.8] - NVS/0-0"   (XGMI[..] in RCCL)
//   "=========================================="
// NET's parenthesis is (collSupport/asic/port/GB/s), before 2.19 (asic/port/GB/s).
// A log often holds only the tree (the path lines cut from a post): paths
// then come from the tree, as NCCL computes them. Every host's lines are a
// node of their own (a job's log has all).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "collector/parse/nccl_log_line.h"
#include "collector/parse/node_topology_parser.h"
#include "core/text.h"

namespace fabtrack {
namespace {

std::optional<int64_t> Int(std::string_view s, int base = 10) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// "0-87000" -> "87000" (the system id prefix of multi-node NVLink builds);
// "0-0-87000" -> "87000": prints quoted with two prefixes exist too, the
// local id is always the last part.
std::string_view Id(std::string_view id) {
  size_t dash = id.rfind('-');
  return dash == std::string_view::npos ? id : id.substr(dash + 1);
}

// Bus ids in lower case, as "Init START" prints them ("GPU/B000" -> "b000").
std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return out;
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

// "0000:0e:00.0" -> "e000", the id the print and the path lines use.
std::string NcclIdOfBus(std::string_view bus) {
  unsigned domain = 0, b = 0, dev = 0, fn = 0;
  char tail = 0;
  std::string text(bus);
  if (sscanf(text.c_str(), "%x:%x:%x.%x%c", &domain, &b, &dev, &fn, &tail) != 4) return "";
  char out[32];
  snprintf(out, sizeof out, "%llx",
           (static_cast<unsigned long long>(domain) << 20) | (b << 12) | (dev << 4) | fn);
  return out;
}

bool IsSystemHeader(std::string_view m) {
  return m.substr(0, 13) == "=== System : " && m.find("max") != std::string_view::npos;
}

// One node of the system print.
struct TreeNode {
  std::string type;          // "CPU", "PCI", "GPU", "NIC", "NET", "NVS", ...
  std::string id;            // local id, lower-case hex ("65000", "c")
  std::string info;          // the parenthesis, without ( )
  int parent = -1;           // index in Tree::nodes; -1 for a CPU's own line
  int cpu = -1;              // index of the CPU line above it
  std::string link;          // the link to its parent: "PCI", "NET", "NVL", "SYS", ...
  std::optional<double> bw;  // GB/s of that link
  int line = 0;
};

struct Tree {
  std::string host;
  std::vector<TreeNode> nodes;
  int first_line = 0;
  int last_line = 0;                          // the last line read into it
  bool closed = false;                        // the "=====" line was seen
  std::vector<std::pair<size_t, int>> stack;  // (column of its children's '+', node)
};

struct HostLines {
  std::map<int64_t, std::pair<std::string, std::optional<int>>> nets;  // index -> name, port
  std::map<std::string, bool> nic_gdr;
  std::map<std::string, bool> gpu_gdr;  // by bus, from "Enabled for GPU 81000 / HCA 1"
  // "ncclTopoPopulateNics : Filled eno1 in topo with pciPath=/sys/devices/
  // .../0000:0e:00.0": the NIC function each net is (by print id, "e000");
  // nets without a PCI path (bridges, veths) share NCCL's virtual NIC/0.
  std::map<std::string, std::string> net_of_nic;
  std::vector<std::string> pathless_nets;
  std::map<std::string, int64_t> index_of_bus;  // "87000" -> nvmlDev
  struct GpuPaths {
    std::optional<int> numa;
    std::map<int64_t, std::optional<TopoPath>> net;
  };
  std::map<std::string, GpuPaths> gpus;  // by bus hex, from path lines
  std::optional<Tree> tree;              // the last complete print, else the last one
  int order = 0;                         // first appearance among hosts
};

class GraphReader {
 public:
  GraphReader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  std::vector<ParsedNodeTopology> Read() {
    int number = 0;
    std::string_view text = text_;
    while (!text.empty()) {
      size_t nl = text.find('\n');
      std::string_view raw = text.substr(0, nl);
      text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
      ++number;
      if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
      Line(raw, number);
      if (errors_.size() > 100) break;
    }
    for (auto& [thread, open] : open_trees_) Finish(open, "file truncated?");
    std::vector<std::pair<int, std::string>> order;
    for (const auto& [host, h] : hosts_) {
      if (!h.gpus.empty() || h.tree) order.push_back({h.order, host});
    }
    std::sort(order.begin(), order.end());
    std::vector<ParsedNodeTopology> out;
    for (const auto& [o, host] : order) out.push_back(Build(host, hosts_[host]));
    if (out.empty()) {
      ParsedNodeTopology none;
      none.format = "nccl_graph";
      none.errors = errors_;
      none.errors.push_back(file_ +
                            ":1: no GPU path lines (\"GPU/<busId> :... NET/0 (.../PIX)\") and no "
                            "system print (\"=== System : maxBw ...\"): run with NCCL_DEBUG=INFO "
                            "NCCL_DEBUG_SUBSYS=INIT,GRAPH");
      out.push_back(std::move(none));
    } else {
      // Problems are the file's: the first node carries them (a cut-off
      // print is the last host's, but any error makes the file unchecked).
      out.front().errors.insert(out.front().errors.begin(), errors_.begin(), errors_.end());
    }
    return out;
  }

 private:
  void Error(int line, const std::string& what) {
    if (errors_.size() < 100) errors_.push_back(file_ + ":" + std::to_string(line) + ": " + what);
  }

  HostLines& Host(const std::string& name) {
    auto [it, added] = hosts_.try_emplace(name);
    if (added) it->second.order = static_cast<int>(hosts_.size());
    return it->second;
  }

  void Line(std::string_view raw, int number) {
    std::optional<NcclLogLine> line = SplitNcclLogLine(raw);
    std::string host;
    std::string thread;     // a print is one thread's consecutive lines
    std::string_view body;  // the message with NCCL's own indentation
    if (line) {
      if (line->level != "INFO") return;
      host = line->host;
      thread = host + ":" + std::to_string(line->pid.value_or(-1)) + ":" +
               std::to_string(line->tid.value_or(-1));
      size_t at = raw.find("NCCL INFO");
      body = at == std::string_view::npos ? std::string_view() : raw.substr(at + 9);
      if (!body.empty() && body.front() == ' ') body.remove_prefix(1);
    } else {
      // A print pasted without its prefixes: only inside a tree, or its header.
      std::string_view t = raw;
      while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
      if (!IsSystemHeader(t) && !(open_trees_.count("") && open_trees_[""].first_line)) return;
      body = raw;
    }
    std::string_view m = body;
    while (!m.empty() && m.front() == ' ') m.remove_prefix(1);
    while (!m.empty() && (m.back() == ' ' || m.back() == '\t')) m.remove_suffix(1);

    if (IsSystemHeader(m)) {
      Tree& t = open_trees_[thread];
      Finish(t, "a second print begins");
      t = Tree();
      t.host = host;
      t.first_line = number;
      Host(host);
      return;
    }
    if (auto it = open_trees_.find(thread); it != open_trees_.end() && it->second.first_line) {
      if (TreeLine(it->second, body, m, number)) return;
      if (m.size() >= 10 && m.find_first_not_of('=') == std::string_view::npos) {
        it->second.closed = true;
        Finish(it->second, "");
        return;
      }
      // Anything else of the same thread ends the print early.
      Finish(it->second, "another line follows");
    }
    if (!line) return;
    PathAndDeviceLine(Host(host), m, number);
  }

  // Keeps a print that ended: a complete one over an earlier cut one.
  void Finish(Tree& t, const std::string& why_open) {
    if (t.first_line == 0) return;
    if (!t.closed) {
      Error(std::max(t.first_line, t.last_line),
            "the system print begun on line " + std::to_string(t.first_line) +
                " is cut off before its closing ===== line (" + why_open + ")");
    }
    HostLines& h = Host(t.host);
    if (!t.nodes.empty() && (!h.tree || t.closed || !h.tree->closed)) h.tree = t;
    t.first_line = 0;
  }

  // "CPU/0 (1/2/-1)" or "<indent>+ PCI[24.0] - GPU/18000 (0)". False: not a
  // tree line.
  bool TreeLine(Tree& t, std::string_view body, std::string_view m, int number) {
    if (m.substr(0, 2) == "+ " || m.substr(0, 4) == "CPU/") t.last_line = number;
    TreeNode n;
    n.line = number;
    std::string_view node;
    size_t name_col = 0;
    size_t plus_col = 0;
    if (m.substr(0, 2) == "+ ") {
      plus_col = body.find('+');
      size_t open = m.find('['), close = m.find("] - ");
      if (open == std::string_view::npos || close == std::string_view::npos || open > close) {
        Error(number, "cannot read system print line '" + std::string(m) + "'");
        return true;
      }
      n.link = std::string(m.substr(2, open - 2));
      std::string bw(m.substr(open + 1, close - open - 1));
      char* end = nullptr;
      double v = std::strtod(bw.c_str(), &end);
      if (end != bw.c_str() && v >= 0) n.bw = v;
      node = m.substr(close + 4);
      name_col = plus_col + (close + 4);
    } else if (m.substr(0, 4) == "CPU/") {
      node = m;
    } else {
      return false;
    }
    size_t slash = node.find('/');
    if (slash == std::string_view::npos || slash == 0) {
      Error(number, "cannot read system print node '" + std::string(node) + "'");
      return true;
    }
    n.type = std::string(node.substr(0, slash));
    std::string_view rest = node.substr(slash + 1);
    size_t space = rest.find(' ');
    n.id = Lower(Id(rest.substr(0, space)));
    if (space != std::string_view::npos) {
      std::string_view info = rest.substr(space + 1);
      if (info.size() >= 2 && info.front() == '(' && info.back() == ')') {
        n.info = std::string(info.substr(1, info.size() - 2));
      }
    }
    if (n.link.empty()) {  // a CPU's own line: a new root
      t.stack.clear();
      n.cpu = static_cast<int>(t.nodes.size());
      t.nodes.push_back(n);
      t.stack.push_back({0, n.cpu});
      return true;
    }
    // The parent is the node whose name starts where this '+' is.
    while (!t.stack.empty() && t.stack.back().first > plus_col) t.stack.pop_back();
    if (t.stack.empty()) {
      Error(number, "system print line '" + std::string(m) + "' has no CPU above it");
      return true;
    }
    n.parent = t.stack.back().second;
    n.cpu = t.nodes[n.parent].cpu;
    const int index = static_cast<int>(t.nodes.size());
    t.nodes.push_back(n);
    t.stack.push_back({name_col, index});
    return true;
  }

  void PathAndDeviceLine(HostLines& h, std::string_view m, int number) {
    const bool path_line = m.substr(0, 4) == "GPU/" && m.find(" :") != std::string_view::npos;
    if (size_t at = m.find(" : Using "); at != std::string_view::npos && m.substr(0, 4) == "NET/") {
      h.nets.clear();
      for (std::string_view f : SplitBlanks(m.substr(at + 9), " ")) {
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
      return;
    }
    if (size_t at = m.find("GPU Direct RDMA Enabled for GPU "); at != std::string_view::npos) {
      // "GPU Direct RDMA Enabled for GPU 81000 / HCA 1 (distance 6 <= 7)":
      // the GPU can do it (a Disabled line may only mean too far).
      std::string_view bus = m.substr(at + 32);
      h.gpu_gdr[Lower(Id(bus.substr(0, bus.find(' '))))] = true;
      return;
    }
    if (size_t at = m.find("GPU Direct RDMA "); at != std::string_view::npos) {
      size_t q = m.find('\'', at);
      size_t q2 = q == std::string_view::npos ? q : m.find('\'', q + 1);
      if (q2 != std::string_view::npos && m.find("for HCA", at) != std::string_view::npos) {
        h.nic_gdr[std::string(m.substr(q + 1, q2 - q - 1))] = m.substr(at + 16, 7) == "Enabled";
      }
      return;
    }
    if (size_t at = m.find("ncclTopoPopulateNics : Filled "); at != std::string_view::npos) {
      std::string_view rest = m.substr(at + 30);
      std::string name(rest.substr(0, rest.find(' ')));
      size_t path = rest.find("pciPath=");
      if (name.empty() || path == std::string_view::npos) return;
      std::string_view pci = rest.substr(path + 8);
      pci = pci.substr(0, pci.find(' '));
      std::string id = NcclIdOfBus(
          pci.substr(pci.rfind('/') == std::string_view::npos ? 0 : pci.rfind('/') + 1));
      if (!id.empty()) {
        h.net_of_nic.try_emplace(id, name);
      } else if (pci == "(null)" && std::find(h.pathless_nets.begin(), h.pathless_nets.end(),
                                              name) == h.pathless_nets.end()) {
        h.pathless_nets.push_back(name);
      }
      return;
    }
    if (m.find("Init START") != std::string_view::npos) {
      std::vector<std::string_view> f = SplitBlanks(m, " ");
      std::optional<int64_t> dev;
      std::string bus;
      for (size_t i = 0; i + 1 < f.size(); ++i) {
        if (f[i] == "nvmlDev" || (f[i] == "cudaDev" && !dev)) dev = Int(f[i + 1]);
        if (f[i] == "busId") bus = Lower(f[i + 1]);
      }
      if (dev && !bus.empty()) h.index_of_bus[bus] = *dev;
      return;
    }
    if (!path_line) return;
    size_t colon = m.find(" :");
    std::string bus = Lower(Id(m.substr(4, colon - 4)));
    HostLines::GpuPaths& g = h.gpus[bus];
    // Entries: "TYPE/id (hops/bw/PATH)"; the first may be glued to ':'.
    std::vector<std::string_view> e = SplitBlanks(m.substr(colon + 2), " ");
    if (!e.empty() && e[0].substr(0, 1) == ":") e[0].remove_prefix(1);
    for (size_t i = 0; i + 1 < e.size(); i += 2) {
      std::string_view node = e[i], info = e[i + 1];
      size_t last = info.rfind('/');
      if (info.size() < 3 || info.front() != '(' || info.back() != ')' ||
          last == std::string_view::npos) {
        Error(number,
              "cannot read path entry '" + std::string(node) + " " + std::string(info) + "'");
        break;
      }
      std::string_view type = info.substr(last + 1, info.size() - last - 2);
      if (node.substr(0, 4) == "NET/") {
        std::optional<int64_t> n = Int(Id(node.substr(4)), 16);
        if (n) g.net[*n] = PathOf(type);
      } else if (node.substr(0, 4) == "CPU/" && type == "PHB") {
        std::optional<int64_t> c = Int(Id(node.substr(4)), 16);
        if (c && *c < 1 << 20) g.numa = static_cast<int>(*c);
      }
    }
  }

  // Where a tree node sits: its CPU and the PCI switches above it, then
  // itself (a GPU or NIC function); a NET is placed at its NIC.
  static PciPlace PlaceOf(const Tree& t, int index) {
    PciPlace p;
    const TreeNode& n = t.nodes[index];
    p.cpu = n.cpu;
    int k = index;
    if (n.type == "NET") k = n.parent;  // its NIC, or a CPU for a socket net
    std::vector<std::string> chain;
    for (; k >= 0 && t.nodes[k].type != "CPU"; k = t.nodes[k].parent) {
      // RCCL's "DEV/.." is the GPU's own PCI function (the GPU hangs off it
      // by a LOC link), not a switch on the way.
      if (t.nodes[k].type != "DEV") chain.push_back(t.nodes[k].id);
    }
    p.chain.assign(chain.rbegin(), chain.rend());
    return p;
  }

  ParsedNodeTopology Build(const std::string& host, HostLines& h) {
    ParsedNodeTopology out;
    out.format = "nccl_graph";
    out.host = host;
    NodeTopology& t = out.topology;
    const Tree empty;
    const Tree& tree = h.tree ? *h.tree : empty;

    // NETs of the tree by index, with their node.
    std::map<int64_t, int> tree_net;
    std::map<std::string, int> tree_gpu;  // by bus
    std::vector<int> nic_nodes;           // NIC functions, to find those without a NET
    std::map<int, bool> nic_has_net;
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const TreeNode& n = tree.nodes[i];
      // A device is where its PCI (or NET) link leads; "+ NVL[..] - GPU/.."
      // and RCCL's "+ XGMI[..] - GPU/.." below a GPU only name a peer.
      // Newer RCCL prints the GPU's function as "DEV/.." with the GPU under
      // it by a LOC link ("+ PCI[12.0] - DEV/0-b000", "+ LOC[5000.0] - GPU/0-b000").
      if (n.type == "NET" && n.link == "NET") {
        if (std::optional<int64_t> v = Int(n.id, 16)) tree_net.emplace(*v, static_cast<int>(i));
        if (n.parent >= 0) nic_has_net[n.parent] = true;
      } else if (n.type == "GPU" && (n.link == "PCI" || (n.link == "LOC" && n.parent >= 0 &&
                                                         tree.nodes[n.parent].type == "DEV"))) {
        tree_gpu.emplace(n.id, static_cast<int>(i));
      } else if (n.type == "NIC" && n.link == "PCI") {
        nic_nodes.push_back(static_cast<int>(i));
      }
    }
    // A print with NIC functions and no NET below any of them (a
    // single-rank communicator, NCCL 2.19 "+ PCI[12.0] - NIC/AF000"; RCCL's
    // socket NIC "+ PCI[1.5] - NIC/0-3000"): the NICs themselves are the
    // nets. A NIC takes the name ncclTopoPopulateNics gave its function;
    // the others, as many as the "Using" list names left, take those in bus
    // order (NCCL lists devices as the driver probed them, in bus order), or
    // else their bus ids. NCCL's virtual NIC/0 of nets without a PCI path
    // (docker bridges, veths) counts only when it is the only one. Names of
    // the list no NIC of the print took are left out.
    if (tree_net.empty() && !nic_nodes.empty()) {
      std::vector<std::pair<int64_t, int>> by_bus;
      for (int node : nic_nodes) {
        if (nic_has_net.count(node)) continue;
        by_bus.push_back({Int(tree.nodes[node].id, 16).value_or(0), node});
      }
      std::sort(by_bus.begin(), by_bus.end());
      if (by_bus.size() > 1 && by_bus.front().first == 0) by_bus.erase(by_bus.begin());
      auto index_of = [&](const std::string& name) -> std::optional<int64_t> {
        for (const auto& [index, name_port] : h.nets) {
          if (name_port.first == name) return index;
        }
        return std::nullopt;
      };
      int64_t synthetic = int64_t{1} << 40;  // beyond any NCCL net index
      std::map<int64_t, std::pair<std::string, std::optional<int>>> placed;
      std::vector<std::pair<int64_t, int>> unnamed;
      for (const auto& [bus, node] : by_bus) {
        const std::string& id = tree.nodes[node].id;
        std::string name;
        if (auto it = h.net_of_nic.find(id); it != h.net_of_nic.end()) name = it->second;
        if (name.empty() && bus == 0 && !h.pathless_nets.empty()) name = h.pathless_nets.front();
        if (name.empty()) {
          unnamed.push_back({bus, node});
          continue;
        }
        const int64_t index = index_of(name).value_or(synthetic++);
        placed[index] = {name, h.nets.count(index) ? h.nets[index].second : std::nullopt};
        tree_net.emplace(index, node);
      }
      std::vector<int64_t> left;  // the list's names no NIC took
      for (const auto& [index, name_port] : h.nets) {
        if (!placed.count(index)) left.push_back(index);
      }
      const bool by_order = unnamed.size() == left.size();
      for (size_t k = 0; k < unnamed.size(); ++k) {
        const int64_t index = by_order ? left[k] : synthetic++;
        placed[index] = by_order ? h.nets[index]
                                 : std::pair<std::string, std::optional<int>>{
                                       BusId(tree.nodes[unnamed[k].second].id), std::nullopt};
        tree_net.emplace(index, unnamed[k].second);
      }
      h.nets = std::move(placed);
    }

    // NICs: the "Using" list, then NETs only the paths or the tree name.
    auto& nets = h.nets;
    for (const auto& [bus, g] : h.gpus) {
      for (const auto& [index, path] : g.net) nets.try_emplace(index, "", std::nullopt);
    }
    for (const auto& [index, node] : tree_net) nets.try_emplace(index, "", std::nullopt);
    std::vector<int64_t> net_index;
    for (const auto& [index, name_port] : nets) {
      TopoNic n;
      n.name = name_port.first.empty() ? "NET/" + std::to_string(index) : name_port.first;
      n.port = name_port.second;
      if (auto it = h.nic_gdr.find(n.name); it != h.nic_gdr.end()) n.gdr = it->second;
      if (auto it = tree_net.find(index); it != tree_net.end()) {
        const TreeNode& net = tree.nodes[it->second];
        // (collSupport/asic/port/GB/s) or (asic/port/GB/s): the last two.
        std::vector<std::string_view> parts;
        std::string_view info = net.info;
        for (size_t at; (at = info.find('/')) != std::string_view::npos;) {
          parts.push_back(info.substr(0, at));
          info.remove_prefix(at + 1);
        }
        parts.push_back(info);
        if (parts.size() >= 3) {
          std::optional<int64_t> port = Int(parts[parts.size() - 2]);
          if (!n.port && port && *port < 1 << 16) n.port = static_cast<int>(*port);
          std::string bw(parts.back());
          double gbs = std::strtod(bw.c_str(), nullptr);
          if (gbs > 0) n.speed_mbps = static_cast<int64_t>(gbs * 8000 + 0.5);
        }
        const TreeNode& nic =
            net.type == "NIC" ? net : tree.nodes[net.parent >= 0 ? net.parent : it->second];
        // NIC/0 is NCCL's virtual NIC of nets without a PCI device (soft-RoCE
        // rxe0, bridges): no bus id (0000:00:00.0 is the host bridge).
        if (nic.type == "NIC" && nic.id != "0") n.bus_id = BusId(nic.id);
        const std::string& cpu = tree.nodes[net.cpu].id;
        if (std::optional<int64_t> c = Int(cpu, 16); c && *c < 1 << 20) {
          n.numa_node = static_cast<int>(*c);
        }
      }
      t.nics.push_back(std::move(n));
      net_index.push_back(index);
    }

    // GPUs in index order (bus order where an index is unknown).
    std::map<std::string, bool> buses;
    for (const auto& [bus, g] : h.gpus) buses[bus] = true;
    for (const auto& [bus, i] : tree_gpu) buses[bus] = true;
    std::vector<std::pair<int64_t, std::string>> order;
    int64_t unknown = 1 << 20;
    for (const auto& [bus, unused] : buses) {
      auto it = h.index_of_bus.find(bus);
      order.push_back({it != h.index_of_bus.end() ? it->second : unknown++, bus});
    }
    std::sort(order.begin(), order.end());
    std::vector<std::vector<std::optional<TopoPath>>> paths;
    for (const auto& [index, bus] : order) {
      TopoGpu gpu;
      gpu.name = index < (1 << 20) ? "GPU" + std::to_string(index) : "GPU/" + bus;
      gpu.bus_id = BusId(bus);
      auto from_paths = h.gpus.find(bus);
      auto in_tree = tree_gpu.find(bus);
      if (from_paths != h.gpus.end()) gpu.numa_node = from_paths->second.numa;
      if (h.gpu_gdr.count(bus)) gpu.gdr = true;
      if (in_tree != tree_gpu.end()) {
        const TreeNode& n = tree.nodes[in_tree->second];
        if (std::optional<int64_t> rank = Int(n.info); rank && *rank < 1 << 30) {
          gpu.rank = static_cast<int>(*rank);
        }
        if (!gpu.numa_node) {
          if (std::optional<int64_t> c = Int(tree.nodes[n.cpu].id, 16); c && *c < 1 << 20) {
            gpu.numa_node = static_cast<int>(*c);
          }
        }
      }
      std::vector<std::optional<TopoPath>> row;
      for (int64_t k : net_index) {
        std::optional<TopoPath> p;
        if (from_paths != h.gpus.end()) {
          auto it = from_paths->second.net.find(k);
          if (it != from_paths->second.net.end()) p = it->second;
        }
        if (!p && in_tree != tree_gpu.end()) {
          auto net = tree_net.find(k);
          if (net != tree_net.end()) {
            p = PathBetween(PlaceOf(tree, in_tree->second), PlaceOf(tree, net->second));
          }
        }
        row.push_back(p);
      }
      t.gpus.push_back(std::move(gpu));
      paths.push_back(std::move(row));
    }
    AssignNearestNics(t, paths);
    AddUplinks(tree, t);
    return out;
  }

  // Each switch (a PCI node with PCI links below it) that has a GPU or NIC
  // under it, with its uplink's GB/s and the best of the links below.
  static void AddUplinks(const Tree& tree, NodeTopology& t) {
    std::map<std::string, std::string> gpu_name, nic_name;  // tree id -> name
    for (const TopoGpu& g : t.gpus) {
      for (const TreeNode& n : tree.nodes) {
        if (n.type == "GPU" && BusId(n.id) == g.bus_id) gpu_name[n.id] = g.name;
      }
    }
    for (const TopoNic& nic : t.nics) {
      if (!nic.bus_id.empty()) {
        for (const TreeNode& n : tree.nodes) {
          if (n.type == "NIC" && BusId(n.id) == nic.bus_id) nic_name[n.id] = nic.name;
        }
      }
    }
    std::vector<TopoUplink> up(tree.nodes.size());
    std::vector<bool> is_switch(tree.nodes.size(), false);
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const TreeNode& n = tree.nodes[i];
      if (n.parent < 0 || n.link != "PCI") continue;
      const TreeNode& parent = tree.nodes[n.parent];
      if (parent.type == "PCI") is_switch[n.parent] = true;
      TopoUplink& u = up[n.parent];
      if (n.bw && (!u.below_bandwidth_gbs || *n.bw > *u.below_bandwidth_gbs)) {
        u.below_bandwidth_gbs = n.bw;
      }
      const std::string* name = nullptr;
      bool gpu = n.type == "GPU" || n.type == "DEV";  // RCCL: the GPU's function
      if (gpu && gpu_name.count(n.id)) name = &gpu_name[n.id];
      if (n.type == "NIC" && nic_name.count(n.id)) name = &nic_name[n.id];
      if (!name) continue;
      for (int p = n.parent; p >= 0 && tree.nodes[p].type == "PCI"; p = tree.nodes[p].parent) {
        (gpu ? up[p].gpus : up[p].nics).push_back(*name);
      }
    }
    for (size_t i = 0; i < tree.nodes.size(); ++i) {
      const TreeNode& n = tree.nodes[i];
      TopoUplink& u = up[i];
      if (!is_switch[i] || (u.gpus.empty() && u.nics.empty())) continue;
      const TreeNode& parent = tree.nodes[n.parent];
      u.upper = parent.type == "CPU" ? "CPU" + parent.id : BusId(parent.id);
      u.lower = BusId(n.id);
      u.bandwidth_gbs = n.bw;
      t.uplinks.push_back(std::move(u));
    }
  }

  std::string_view text_;
  const std::string& file_;
  std::map<std::string, HostLines> hosts_;
  std::map<std::string, Tree> open_trees_;  // by thread ("host:pid:tid")
  std::vector<std::string> errors_;
};

}  // namespace

std::vector<ParsedNodeTopology> ParseNcclGraphHosts(std::string_view text,
                                                    const std::string& file) {
  return GraphReader(text, file).Read();
}

ParsedNodeTopology ParseNcclGraphLines(std::string_view text, const std::string& file) {
  std::vector<ParsedNodeTopology> hosts = ParseNcclGraphHosts(text, file);
  return std::move(hosts.front());
}

}  // namespace fabtrack
