// `nvidia-smi topo -m` matrices, and the format sniffing (see
// node_topology_parser.h); the NCCL XML reader is nccl_topo_xml_parser.cc.
#include "collector/parse/node_topology_parser.h"

#include <charconv>
#include <map>

#include "collector/parse/nccl_log_line.h"

namespace fabtrack {
namespace {

struct Line {
  std::string text;  // without ANSI escapes and '\r'
  int number = 0;
};

// nvidia-smi underlines the header with ESC[4m ... ESC[0m on a terminal.
std::string StripAnsi(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\x1b' && i + 1 < s.size() && s[i + 1] == '[') {
      size_t k = i + 2;
      while (k < s.size() && (isdigit(static_cast<unsigned char>(s[k])) || s[k] == ';')) ++k;
      if (k < s.size()) {
        i = k;  // the final letter
        continue;
      }
    }
    if (s[i] != '\r') out += s[i];
  }
  return out;
}

std::vector<Line> Lines(std::string_view text) {
  std::vector<Line> out;
  int n = 0;
  while (!text.empty()) {
    size_t nl = text.find('\n');
    out.push_back({StripAnsi(text.substr(0, nl)), ++n});
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && isspace(static_cast<unsigned char>(s[i]))) ++i;
    size_t start = i;
    while (i < s.size() && !isspace(static_cast<unsigned char>(s[i]))) ++i;
    if (i > start) out.emplace_back(s.substr(start, i - start));
  }
  return out;
}

bool IsIndexed(const std::string& w, std::string_view prefix) {
  if (w.size() <= prefix.size() || w.compare(0, prefix.size(), prefix) != 0) return false;
  for (size_t i = prefix.size(); i < w.size(); ++i) {
    if (!isdigit(static_cast<unsigned char>(w[i]))) return false;
  }
  return w.size() - prefix.size() <= 6;
}

std::optional<int> SmallInt(const std::string& s) {
  int v = 0;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || end != s.data() + s.size() || v < 0) return std::nullopt;
  return v;
}

// The header: "GPU0" first, no "X" cell (every row has one, on its diagonal).
bool IsHeader(const std::vector<std::string>& w) {
  if (w.empty() || w[0] != "GPU0") return false;
  for (const std::string& s : w) {
    if (s == "X") return false;
  }
  return true;
}

enum class Extra { kCpuAffinity, kNumaAffinity, kGpuNumaId };

}  // namespace

ParsedNodeTopology ParseSmiTopoMatrix(std::string_view text, const std::string& file) {
  ParsedNodeTopology out;
  out.format = "nvidia_smi_topo";
  auto error = [&](int line, const std::string& what) {
    if (out.errors.size() < 100)
      out.errors.push_back(file + ":" + std::to_string(line) + ": " + what);
  };
  std::vector<Line> lines = Lines(text);
  size_t h = 0;
  while (h < lines.size() && !IsHeader(Words(lines[h].text))) ++h;
  if (h == lines.size()) {
    error(1, "no matrix header (a line of column labels starting with GPU0)");
    return out;
  }
  // Column labels, then the per-row facts after them.
  std::vector<std::string> header = Words(lines[h].text);
  std::vector<std::string> devices;
  std::vector<Extra> extras;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& w = header[i];
    auto next = [&](size_t k) { return i + k < header.size() ? header[i + k] : std::string(); };
    if (w == "CPU" && next(1) == "Affinity") {
      extras.push_back(Extra::kCpuAffinity);
      ++i;
    } else if (w == "NUMA" && next(1) == "Affinity") {
      extras.push_back(Extra::kNumaAffinity);
      ++i;
    } else if (w == "GPU" && next(1) == "NUMA" && next(2) == "ID") {
      extras.push_back(Extra::kGpuNumaId);
      i += 2;
    } else if (extras.empty()) {
      devices.push_back(w);
    } else {
      error(lines[h].number, "unexpected column label '" + w + "' after the affinity columns");
    }
  }
  std::map<std::string, size_t> column;
  for (size_t i = 0; i < devices.size(); ++i) {
    if (!column.emplace(devices[i], i).second) {
      error(lines[h].number, "column " + devices[i] + " appears twice");
    }
  }

  // Rows until the Legend (or a blank line after at least one row).
  std::map<std::string, std::vector<std::string>> rows;
  std::map<std::string, int> row_line;
  size_t r = h + 1;
  for (; r < lines.size(); ++r) {
    std::vector<std::string> w = Words(lines[r].text);
    if (w.empty()) {
      if (!rows.empty()) break;
      continue;
    }
    if (w[0] == "Legend:" || w[0] == "NIC") break;
    if (!column.count(w[0])) {
      error(lines[r].number, "row '" + w[0] + "' is not a column of the header");
      continue;
    }
    if (w.size() < devices.size() + 1) {
      error(lines[r].number, w[0] + " has " + std::to_string(w.size() - 1) + " of " +
                                 std::to_string(devices.size()) + " cells: line cut short?");
    }
    if (!rows.emplace(w[0], w).second) error(lines[r].number, "second row for " + w[0]);
    row_line.emplace(w[0], lines[r].number);
  }

  // "NIC Legend:" then "  NIC0: mlx5_0" lines.
  std::map<std::string, std::string> legend;
  bool in_legend = false;
  for (; r < lines.size(); ++r) {
    std::vector<std::string> w = Words(lines[r].text);
    if (w.size() == 2 && w[0] == "NIC" && w[1] == "Legend:") {
      in_legend = true;
      continue;
    }
    if (!in_legend || w.empty()) continue;
    if (w.size() == 2 && w[0].size() > 1 && w[0].back() == ':' &&
        IsIndexed(w[0].substr(0, w[0].size() - 1), "NIC")) {
      legend[w[0].substr(0, w[0].size() - 1)] = w[1];
    } else {
      in_legend = false;
    }
  }

  NodeTopology& t = out.topology;
  std::vector<size_t> gpu_cols, nic_cols;
  for (size_t i = 0; i < devices.size(); ++i) {
    const std::string& d = devices[i];
    if (IsIndexed(d, "GPU")) {
      gpu_cols.push_back(i);
      TopoGpu g;
      g.name = d;
      auto row = rows.find(d);
      if (row == rows.end()) {
        error(lines.back().number, d + " has no row: file truncated?");
      } else {
        // The facts after the cells, in header order; a NIC row has none.
        for (size_t e = 0; e < extras.size(); ++e) {
          size_t k = 1 + devices.size() + e;
          if (k >= row->second.size()) break;
          if (extras[e] == Extra::kNumaAffinity) g.numa_node = SmallInt(row->second[k]);
        }
      }
      t.gpus.push_back(std::move(g));
    } else {
      nic_cols.push_back(i);
      TopoNic n;
      if (IsIndexed(d, "NIC")) {
        auto it = legend.find(d);
        if (it == legend.end()) {
          error(lines[h].number, d + " is not in the NIC Legend: file truncated?");
          n.name = d;
        } else {
          n.name = it->second;
        }
      } else {
        n.name = d;  // older drivers: the HCA name is the column label
      }
      t.nics.push_back(std::move(n));
    }
  }

  std::vector<std::vector<std::optional<TopoPath>>> paths(gpu_cols.size());
  for (size_t g = 0; g < gpu_cols.size(); ++g) {
    auto row = rows.find(devices[gpu_cols[g]]);
    for (size_t n = 0; n < nic_cols.size(); ++n) {
      std::optional<TopoPath> p;
      if (row != rows.end() && 1 + nic_cols[n] < row->second.size()) {
        const std::string& cell = row->second[1 + nic_cols[n]];
        p = TopoPathFromName(cell);
        if (!p) {
          error(row_line[row->first], row->first + " -> " + devices[nic_cols[n]] + ": '" + cell +
                                          "' is not a PCIe path (PIX, PXB, PHB, NODE, SYS)");
        }
      }
      paths[g].push_back(p);
    }
  }
  AssignNearestNics(t, paths);
  return out;
}

namespace {

// NCCL's dump starts with <system>, after at most a prolog and comments; a
// text that only mentions the element (a README, a log quoting it) is not one.
bool StartsWithSystemElement(std::string_view text) {
  if (text.substr(0, 3) == "\xEF\xBB\xBF") text.remove_prefix(3);  // UTF-8 BOM
  while (true) {
    while (!text.empty() && isspace(static_cast<unsigned char>(text.front())))
      text.remove_prefix(1);
    std::string_view end;
    if (text.substr(0, 2) == "<?") {
      end = "?>";
    } else if (text.substr(0, 4) == "<!--") {
      end = "-->";
    } else {
      break;
    }
    size_t at = text.find(end);
    if (at == std::string_view::npos) return false;
    text.remove_prefix(at + end.size());
  }
  return text.substr(0, 7) == "<system" && (text.size() == 7 || text[7] == '>' || text[7] == '/' ||
                                            isspace(static_cast<unsigned char>(text[7])));
}

}  // namespace

std::string SniffTopologyFormat(std::string_view text) {
  if (StartsWithSystemElement(text)) return "nccl_xml";
  for (const Line& l : Lines(text.substr(0, 1 << 20))) {
    std::vector<std::string> w = Words(l.text);
    if (IsHeader(w)) return "nvidia_smi_topo";
  }
  for (const Line& l : Lines(text.substr(0, 4 << 20))) {
    if (l.text.find("NCCL INFO GPU/") == std::string::npos) continue;
    std::optional<NcclLogLine> line = SplitNcclLogLine(l.text);
    if (line && line->message.rfind("GPU/", 0) == 0 &&
        line->message.find(" :") != std::string::npos) {
      return "nccl_graph";
    }
  }
  return "";
}

ParsedNodeTopology ParseNodeTopology(std::string_view text, const std::string& file) {
  const std::string format = SniffTopologyFormat(text);
  if (format == "nccl_xml") return ParseNcclTopoXml(text, file);
  if (format == "nvidia_smi_topo") return ParseSmiTopoMatrix(text, file);
  if (format == "nccl_graph") return ParseNcclGraphLines(text, file);
  ParsedNodeTopology out;
  out.errors.push_back(file +
                       ":1: neither an NCCL topology dump (<system>), an `nvidia-smi topo -m` "
                       "matrix (a header of GPU0 ... columns) nor NCCL GRAPH debug lines");
  return out;
}

}  // namespace fabtrack
