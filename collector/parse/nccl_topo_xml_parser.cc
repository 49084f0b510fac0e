// NCCL's topology XML (see node_topology_parser.h). A small tolerant reader
// of the subset NCCL writes (xml.cc ncclTopoDumpXmlRec): elements with
// double-quoted attributes, no text content, an optional <?xml?> prolog and
// comments. It keeps going past what it does not understand and reports it.
#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <map>
#include <optional>

#include "collector/parse/node_topology_parser.h"

namespace fabtrack {
namespace {

struct Element {
  std::string name;
  std::map<std::string, std::string> attrs;
  int line = 0;
  int pci = -1;  // a <pci>'s index in XmlReader::pcis_
};

std::string Unescape(std::string_view v) {
  std::string out;
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] == '&') {
      static const std::pair<std::string_view, char> kEntities[] = {
          {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&quot;", '"'}, {"&apos;", '\''}};
      bool done = false;
      for (const auto& [entity, c] : kEntities) {
        if (v.substr(i, entity.size()) == entity) {
          out += c;
          i += entity.size() - 1;
          done = true;
          break;
        }
      }
      if (done) continue;
    }
    out += v[i];
  }
  return out;
}

std::optional<int64_t> ToInt(const std::string& s) {
  int64_t v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return v;
}

// "16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s": the leading number; "Unknown" or
// empty (VMs) say nothing.
std::optional<double> LinkSpeed(const std::string& s) {
  char* end = nullptr;
  double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || !(v > 0) || v > 1e4) return std::nullopt;
  return v;
}

using Endpoint = PciPlace;

// PCI class codes (the class attribute, "0x030200"): what a cloud
// provider's PCI-only topology file says a device is.
bool IsGpuClass(const std::string& c) {
  return c.rfind("0x0302", 0) == 0 || c.rfind("0x0380", 0) == 0;  // 3D controller; AMD display
}
bool IsNicClass(const std::string& c) {
  return c.rfind("0x0207", 0) == 0 || c.rfind("0x0200", 0) == 0;  // InfiniBand; Ethernet
}

class XmlReader {
 public:
  static constexpr size_t kMaxDepth = 64;
  static constexpr size_t kMaxDevices = 4096;

  XmlReader(std::string_view text, const std::string& file) : text_(text), file_(file) {}

  ParsedNodeTopology Read() {
    out_.format = "nccl_xml";
    size_t i = 0;
    while (i < text_.size()) {
      const char c = text_[i];
      if (c == '\n') {
        ++line_;
        ++i;
        continue;
      }
      if (c != '<') {
        ++i;  // text content and whitespace: NCCL writes none that matters
        continue;
      }
      if (text_.compare(i, 4, "<!--") == 0) {
        size_t end = text_.find("-->", i + 4);
        if (end == std::string_view::npos) return Fail("comment never closed");
        CountLines(i, end + 3);
        i = end + 3;
        continue;
      }
      size_t end = text_.find('>', i);
      if (end == std::string_view::npos) return Fail("tag never closed: file truncated?");
      std::string_view tag = text_.substr(i + 1, end - i - 1);
      const int tag_line = line_;
      CountLines(i, end);
      i = end + 1;
      if (tag.empty()) {
        Error(tag_line, "empty tag <>");
        continue;
      }
      if (tag[0] == '?' || tag[0] == '!') continue;  // prolog, doctype
      if (tag[0] == '/') {
        Close(std::string(Trim(tag.substr(1))), tag_line);
        // The dump's root closed: what follows is no part of it (the job's
        // log pasted under a dump, "ens16f1:10.0.0.1<0>", is no tag).
        if (seen_system_ && stack_.empty()) break;
        continue;
      }
      bool self_closing = tag.back() == '/';
      if (self_closing) tag.remove_suffix(1);
      std::optional<Element> e = ParseTag(tag, tag_line);
      if (!e) continue;
      // NCCL nests a handful of levels (system, cpu, a few switches, pci,
      // gpu, nvlink); far deeper is not a topology dump.
      if (stack_.size() >= kMaxDepth)
        return Fail("elements nested deeper than " + std::to_string(kMaxDepth));
      if (gpus_.size() + nics_.size() >= kMaxDevices) {
        return Fail("more than " + std::to_string(kMaxDevices) + " GPUs and NICs");
      }
      Open(*e);
      if (self_closing) Close(e->name, tag_line);
    }
    if (!stack_.empty()) {
      Error(line_, "<" + stack_.back().name + "> opened on line " +
                       std::to_string(stack_.back().line) + " is never closed: file truncated?");
    }
    if (!seen_system_) Error(1, "no <system> element: not an NCCL topology dump");
    Finish();
    // A cloud image's skeleton of bare <pci busid=".."/> (no class, no
    // <gpu>/<net>: NCCL completes it from the machine's sysfs at run time)
    // says nothing of the wiring; "every GPU has its own NIC" of zero GPUs
    // would be a verdict on nothing.
    if (seen_system_ && out_.errors.empty() && out_.topology.gpus.empty() &&
        out_.topology.nics.empty()) {
      Error(system_line_,
            "no GPU and no NIC: no <gpu> or <net>, and no <pci> with a GPU or NIC class "
            "(a skeleton NCCL fills in from the machine at run time); nothing to check");
    }
    return std::move(out_);
  }

 private:
  static std::string_view Trim(std::string_view s) {
    while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
    while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
    return s;
  }

  void CountLines(size_t from, size_t to) {
    for (size_t k = from; k < to && k < text_.size(); ++k) line_ += text_[k] == '\n';
  }

  void Error(int line, const std::string& what) {
    if (out_.errors.size() < 100) {
      out_.errors.push_back(file_ + ":" + std::to_string(line) + ": " + what);
    }
  }

  ParsedNodeTopology Fail(const std::string& what) {
    Error(line_, what);
    Finish();
    return std::move(out_);
  }

  std::optional<Element> ParseTag(std::string_view tag, int line) {
    Element e;
    e.line = line;
    size_t k = 0;
    while (k < tag.size() && !isspace(static_cast<unsigned char>(tag[k]))) ++k;
    e.name = std::string(tag.substr(0, k));
    while (k < tag.size()) {
      while (k < tag.size() && isspace(static_cast<unsigned char>(tag[k]))) ++k;
      if (k >= tag.size()) break;
      size_t eq = tag.find('=', k);
      if (eq == std::string_view::npos) {
        Error(line, "<" + e.name + ">: attribute without a value");
        break;
      }
      std::string key(Trim(tag.substr(k, eq - k)));
      size_t q = eq + 1;
      while (q < tag.size() && isspace(static_cast<unsigned char>(tag[q]))) ++q;
      if (q >= tag.size() || (tag[q] != '"' && tag[q] != '\'')) {
        Error(line, "<" + e.name + ">: value of " + key + " is not quoted");
        break;
      }
      size_t close = tag.find(tag[q], q + 1);
      if (close == std::string_view::npos) {
        Error(line, "<" + e.name + ">: value of " + key + " is never closed");
        break;
      }
      e.attrs[key] = Unescape(tag.substr(q + 1, close - q - 1));
      k = close + 1;
    }
    return e;
  }

  std::optional<int64_t> IntAttr(const Element& e, const std::string& key) {
    auto it = e.attrs.find(key);
    if (it == e.attrs.end() || it->second.empty()) return std::nullopt;
    std::optional<int64_t> v = ToInt(it->second);
    if (!v) Error(e.line, "<" + e.name + "> " + key + "=\"" + it->second + "\" is not a number");
    return v;
  }

  static std::string Attr(const Element& e, const std::string& key) {
    auto it = e.attrs.find(key);
    return it == e.attrs.end() ? std::string() : it->second;
  }

  std::optional<bool> Flag(const Element& e, const std::string& key) {
    std::optional<int64_t> v = IntAttr(e, key);
    if (!v) return std::nullopt;
    return *v != 0;
  }

  Endpoint Here() const {
    Endpoint p;
    p.cpu = cpu_index_.empty() ? -1 : cpu_index_.back();
    for (const Element& e : stack_) {
      if (e.name == "pci") p.chain.push_back(Attr(e, "busid"));
    }
    return p;
  }

  const Element* InnermostPci() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->name == "pci") return &*it;
      if (it->name == "cpu") break;
    }
    return nullptr;
  }

  std::optional<int> Numa() {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->name != "cpu") continue;
      std::optional<int64_t> n = IntAttr(*it, "numaid");
      if (n && *n >= 0 && *n < 1 << 20) return static_cast<int>(*n);
      return std::nullopt;
    }
    return std::nullopt;
  }

  void Link(const Element* pci, std::optional<double>& gts, std::optional<int>& width) {
    if (!pci) return;
    gts = LinkSpeed(Attr(*pci, "link_speed"));
    std::optional<int64_t> w = IntAttr(*pci, "link_width");
    // 0 (and 255, "unknown" in the PCIe spec) is what VMs report.
    if (w && *w > 0 && *w <= 32) width = static_cast<int>(*w);
  }

  int InnermostPciIndex() const {
    for (auto it = stack_.rbegin(); it != stack_.rend(); ++it) {
      if (it->name == "pci") return it->pci;
      if (it->name == "cpu") break;
    }
    return -1;
  }

  void Open(Element e) {
    if (e.name == "pci") {
      PciAt p;
      p.busid = Attr(e, "busid");
      p.cls = Attr(e, "class");
      p.line = e.line;
      p.parent = InnermostPciIndex();
      p.numa = Numa();
      p.at = Here();
      p.at.chain.push_back(p.busid);
      Link(&e, p.gts, p.width);
      if (p.parent >= 0) pcis_[p.parent].has_child_pci = true;
      e.pci = static_cast<int>(pcis_.size());
      pcis_.push_back(std::move(p));
    } else if (e.name == "system") {
      if (!seen_system_) system_line_ = e.line;
      seen_system_ = true;
    } else if (e.name == "cpu") {
      cpu_index_.push_back(cpus_++);
    } else if (e.name == "gpu") {
      TopoGpu g;
      std::optional<int64_t> dev = IntAttr(e, "dev");
      g.name = dev ? "GPU" + std::to_string(*dev) : "GPU?";
      if (!dev) Error(e.line, "<gpu> without dev");
      const Element* pci = InnermostPci();
      if (pci) g.bus_id = Attr(*pci, "busid");
      g.numa_node = Numa();
      std::optional<int64_t> rank = IntAttr(e, "rank");
      if (rank && *rank >= 0 && *rank < 1 << 30) g.rank = static_cast<int>(*rank);
      g.gdr = Flag(e, "gdr");
      Link(pci, g.link_gts, g.link_width);
      const int at = InnermostPciIndex();
      if (at >= 0) pcis_[at].has_device = true;
      gpus_.push_back({std::move(g), Here(), dev.value_or(1 << 30), at});
    } else if (e.name == "net") {
      TopoNic n;
      n.name = Attr(e, "name");
      if (n.name.empty()) {
        Error(e.line, "<net> without name");
        n.name = "net" + Attr(e, "dev");
      }
      const Element* pci = InnermostPci();
      if (pci) n.bus_id = Attr(*pci, "busid");
      n.numa_node = Numa();
      std::optional<int64_t> speed = IntAttr(e, "speed");
      if (speed && *speed > 0) n.speed_mbps = *speed;
      std::optional<int64_t> port = IntAttr(e, "port");
      if (port && *port >= 0 && *port < 1 << 16) n.port = static_cast<int>(*port);
      n.gdr = Flag(e, "gdr");
      Link(pci, n.link_gts, n.link_width);
      const int at = InnermostPciIndex();
      if (at >= 0) pcis_[at].has_device = true;
      nics_.push_back({std::move(n), Here(), at});
    }
    stack_.push_back(e);
  }

  void Close(const std::string& name, int line) {
    for (size_t k = stack_.size(); k-- > 0;) {
      if (stack_[k].name != name) continue;
      if (k + 1 != stack_.size()) {
        Error(line, "</" + name + "> closes <" + stack_.back().name + "> opened on line " +
                        std::to_string(stack_.back().line));
      }
      while (stack_.size() > k) {
        if (stack_.back().name == "cpu" && !cpu_index_.empty()) cpu_index_.pop_back();
        stack_.pop_back();
      }
      return;
    }
    Error(line, "</" + name + "> closes nothing");
  }

  // A PCI-only file (the NCCL_TOPO_FILEs cloud images ship: GPUs and NICs
  // are <pci> leaves known by their class, without <gpu>/<net> children):
  // GPUs in bus order, as nvidia-smi and CUDA's PCI_BUS_ID order number
  // them; NICs named by bus id (the file does not say the HCA's name).
  void AddClassOnlyDevices() {
    std::vector<int> gpu_pcis, nic_pcis;
    for (size_t i = 0; i < pcis_.size(); ++i) {
      const PciAt& p = pcis_[i];
      if (p.has_child_pci || p.has_device) continue;
      if (gpus_.empty() && IsGpuClass(p.cls)) gpu_pcis.push_back(static_cast<int>(i));
      if (nics_.empty() && IsNicClass(p.cls)) nic_pcis.push_back(static_cast<int>(i));
    }
    std::stable_sort(gpu_pcis.begin(), gpu_pcis.end(),
                     [&](int a, int b) { return pcis_[a].busid < pcis_[b].busid; });
    for (size_t k = 0; k < gpu_pcis.size(); ++k) {
      const PciAt& p = pcis_[gpu_pcis[k]];
      TopoGpu g;
      g.name = "GPU" + std::to_string(k);
      g.bus_id = p.busid;
      g.numa_node = p.numa;
      g.link_gts = p.gts;
      g.link_width = p.width;
      gpus_.push_back({std::move(g), p.at, static_cast<int64_t>(k), gpu_pcis[k]});
    }
    for (int i : nic_pcis) {
      const PciAt& p = pcis_[i];
      TopoNic n;
      // A NIC needs a name; a <pci> without busid is a broken file.
      n.name = p.busid.empty() ? "NIC#" + std::to_string(nics_.size()) : p.busid;
      if (p.busid.empty()) Error(p.line, "<pci class=\"" + p.cls + "\"> without busid");
      n.bus_id = p.busid;
      n.numa_node = p.numa;
      n.link_gts = p.gts;
      n.link_width = p.width;
      nics_.push_back({std::move(n), p.at, i});
    }
  }

  // Every switch or bridge with a GPU or NIC below it, with the best of the
  // links directly below it.
  void AddUplinks(NodeTopology& t) const {
    std::vector<TopoUplink> up(pcis_.size());
    auto below = [&](int pci, const std::string& name, bool gpu) {
      for (int p = pcis_[pci].parent; p >= 0; p = pcis_[p].parent) {
        (gpu ? up[p].gpus : up[p].nics).push_back(name);
      }
    };
    for (const GpuAt& g : gpus_) {
      if (g.pci >= 0) below(g.pci, g.gpu.name, true);
    }
    for (const NicAt& n : nics_) {
      if (n.pci >= 0) below(n.pci, n.nic.name, false);
    }
    for (size_t i = 0; i < pcis_.size(); ++i) {
      const PciAt& child = pcis_[i];
      if (child.parent < 0) continue;
      TopoUplink& u = up[child.parent];
      if (child.gts && (!u.below_gts || *child.gts > *u.below_gts)) u.below_gts = child.gts;
      if (child.width && (!u.below_width || *child.width > *u.below_width))
        u.below_width = child.width;
    }
    for (size_t i = 0; i < pcis_.size(); ++i) {
      const PciAt& p = pcis_[i];
      TopoUplink& u = up[i];
      if (!p.has_child_pci || (u.gpus.empty() && u.nics.empty())) continue;
      u.upper = p.parent >= 0 ? pcis_[p.parent].busid
                              : "CPU" + (p.numa ? std::to_string(*p.numa) : std::string("?"));
      u.lower = p.busid;
      u.link_gts = p.gts;
      u.link_width = p.width;
      t.uplinks.push_back(std::move(u));
    }
  }

  void Finish() {
    AddClassOnlyDevices();
    std::stable_sort(gpus_.begin(), gpus_.end(),
                     [](const GpuAt& a, const GpuAt& b) { return a.dev < b.dev; });
    NodeTopology& t = out_.topology;
    for (const GpuAt& g : gpus_) t.gpus.push_back(g.gpu);
    for (const NicAt& n : nics_) t.nics.push_back(n.nic);
    std::vector<std::vector<std::optional<TopoPath>>> paths(gpus_.size());
    for (size_t g = 0; g < gpus_.size(); ++g) {
      for (const NicAt& n : nics_) paths[g].push_back(PathBetween(gpus_[g].at, n.at));
    }
    AssignNearestNics(t, paths);
    AddUplinks(t);
  }

  struct GpuAt {
    TopoGpu gpu;
    Endpoint at;
    int64_t dev;
    int pci = -1;  // its <pci> in pcis_
  };
  struct NicAt {
    TopoNic nic;
    Endpoint at;
    int pci = -1;
  };
  struct PciAt {
    std::string busid, cls;
    int line = 0;
    int parent = -1;  // the enclosing <pci>; -1: directly under a <cpu>
    std::optional<int> numa;
    std::optional<double> gts;
    std::optional<int> width;
    bool has_child_pci = false;  // a switch or bridge
    bool has_device = false;     // holds a <gpu> or <net>
    Endpoint at;                 // its place, its own bus id last
  };

  std::string_view text_;
  const std::string& file_;
  int line_ = 1;
  bool seen_system_ = false;
  int system_line_ = 1;
  int cpus_ = 0;
  std::vector<Element> stack_;
  std::vector<int> cpu_index_;
  std::vector<GpuAt> gpus_;
  std::vector<NicAt> nics_;
  std::vector<PciAt> pcis_;
  ParsedNodeTopology out_;
};

}  // namespace

ParsedNodeTopology ParseNcclTopoXml(std::string_view text, const std::string& file) {
  return XmlReader(text, file).Read();
}

}  // namespace fabtrack
