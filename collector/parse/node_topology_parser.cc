// `nvidia-smi topo -m` matrices, and the format sniffing (see
// node_topology_parser.h); the NCCL XML reader is nccl_topo_xml_parser.cc.
#include "collector/parse/node_topology_parser.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <functional>
#include <map>
#include <set>

#include "collector/parse/line_cleaner.h"
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

// A header pasted with its tabs lost runs the labels together
// ("GPU0GPU1NIC0NIC1CPU AffinityNUMA AffinityGPU NUMA ID",
// "GPU7mlx5_0"): split where a label starts, at a digit or lower-case letter
// followed by an upper-case one and at a digit followed by an HCA name.
std::vector<std::string> HeaderWords(std::string_view s) {
  static constexpr std::string_view kHcaPrefixes[] = {"mlx",   "hfi", "bnxt",  "qedr",
                                                      "irdma", "efa", "rocep", "ib"};
  std::vector<std::string> words = Words(s);
  // The underline escapes with their ESC byte lost on the way to a web page
  // ("[4m\tGPU0\t... GPU NUMA ID[0m") are not labels.
  auto literal_escape = [](std::string_view w, size_t at) {
    size_t k = at + 1;
    while (k < w.size() && isdigit(static_cast<unsigned char>(w[k]))) ++k;
    return w.size() > at && w[at] == '[' && k > at + 1 && k < w.size() && w[k] == 'm' ? k + 1 : 0;
  };
  if (!words.empty()) {
    if (size_t end = literal_escape(words.front(), 0); end) {
      words.front().erase(0, end);
      if (words.front().empty()) words.erase(words.begin());
    }
  }
  if (!words.empty()) {
    std::string& last = words.back();
    if (size_t open = last.rfind('[');
        open != std::string::npos && open > 0 && literal_escape(last, open) == last.size()) {
      last.erase(open);
    }
  }
  if (words.empty() || words[0].rfind("GPU0", 0) != 0) return words;  // not a header
  std::vector<std::string> out;
  for (const std::string& w : words) {
    size_t start = 0;
    for (size_t i = 1; i < w.size(); ++i) {
      const unsigned char prev = w[i - 1], c = w[i];
      bool split = (isdigit(prev) || islower(prev)) && isupper(c);
      if (!split && isdigit(prev) && islower(c)) {
        for (std::string_view hca : kHcaPrefixes) split |= w.compare(i, hca.size(), hca) == 0;
      }
      if (split) {
        out.push_back(w.substr(start, i - start));
        start = i;
      }
    }
    out.push_back(w.substr(start));
  }
  return out;
}

// A matrix pasted from a commented job script ("# GPU0 GPU1 ...") or kept
// in a source comment ("   * GPU0\tGPU1 ..." in a Javadoc block, "// GPU0").
std::string_view WithoutCommentMark(std::string_view s) {
  size_t i = 0;
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
  if (s.substr(i, 2) == "//") {
    i += 2;
  } else if (i < s.size() && (s[i] == '#' || s[i] == '*')) {
    ++i;
  } else {
    return s;
  }
  if (i < s.size() && s[i] == ' ') ++i;
  return s.substr(i);
}

// A rule drawn under the header when a matrix is retyped ("-----...").
bool IsRule(const std::vector<std::string>& w) {
  return w.size() == 1 && w[0].size() >= 3 && w[0].find_first_not_of("-=_") == std::string::npos;
}

// A column label: "GPU3", "NIC11", or an HCA's name ("mlx5_0", "ibp26s0").
bool IsDeviceLabel(const std::string& w) {
  if (IsIndexed(w, "GPU") || IsIndexed(w, "NIC")) return true;
  return !w.empty() && islower(static_cast<unsigned char>(w[0])) &&
         std::all_of(w.begin(), w.end(), [](char c) {
           return isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
         });
}

// The header: "GPU0" first, no "X" cell (every row has one, on its
// diagonal), and only device labels before the affinity columns: a row
// whose spaces were lost in a page scrape ("GPU0XNV4SYSSYS0-150N/A", split
// into "GPU0", "XNV4SYSSYS0-150", "N/A") is none.
bool IsHeader(const std::vector<std::string>& w) {
  if (w.empty() || w[0] != "GPU0") return false;
  for (size_t i = 0; i < w.size(); ++i) {
    if (w[i] == "X") return false;
    if (w[i] == "CPU" || w[i] == "NUMA" || w[i] == "GPU") break;
    if (!IsDeviceLabel(w[i])) return false;
  }
  return true;
}

// The cells of a row whose separating tab was lost in a paste ("PIXNODE",
// "NODENODE", "NV18NV18"): split when the word is two or more cells and
// nothing else; any other word is kept whole.
std::vector<std::string> SplitRunTogetherCells(const std::string& w) {
  static constexpr std::string_view kCells[] = {"NODE", "PIX", "PXB", "PHB", "SYS", "SOC", "X"};
  std::vector<std::string> out;
  size_t i = 0;
  while (i < w.size()) {
    size_t len = 0;
    if (w.compare(i, 2, "NV") == 0) {
      len = 2;
      while (i + len < w.size() && isdigit(static_cast<unsigned char>(w[i + len]))) ++len;
      if (len == 2) len = 0;
    }
    for (std::string_view c : kCells) {
      if (len == 0 && w.compare(i, c.size(), c) == 0) len = c.size();
    }
    if (len == 0) return {w};
    out.push_back(w.substr(i, len));
    i += len;
  }
  return out.size() >= 2 ? out : std::vector<std::string>{w};
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
  while (h < lines.size() && !IsHeader(HeaderWords(lines[h].text))) ++h;
  if (h == lines.size()) {
    // Every line commented out ("# " from a job script): read it without.
    h = 0;
    while (h < lines.size() && !IsHeader(HeaderWords(WithoutCommentMark(lines[h].text)))) ++h;
    if (h < lines.size()) {
      for (Line& l : lines) l.text = std::string(WithoutCommentMark(l.text));
    }
  }
  if (h == lines.size()) {
    error(1, "no matrix header (a line of column labels starting with GPU0)");
    return out;
  }
  // Column labels, then the per-row facts after them.
  std::vector<std::string> header = HeaderWords(lines[h].text);
  std::vector<std::string> devices;
  std::vector<Extra> extras;
  for (size_t i = 0; i < header.size(); ++i) {
    const std::string& w = header[i];
    auto next = [&](size_t k) { return i + k < header.size() ? header[i + k] : std::string(); };
    // Retyped headers shorten the labels ("CPU Affinity   NUMA  GPU NUMA").
    if (w == "CPU" && next(1) == "Affinity") {
      extras.push_back(Extra::kCpuAffinity);
      ++i;
    } else if (w == "NUMA") {
      extras.push_back(Extra::kNumaAffinity);
      if (next(1) == "Affinity") ++i;
    } else if (w == "GPU" && next(1) == "NUMA") {
      extras.push_back(Extra::kGpuNumaId);
      i += next(2) == "ID" ? 2 : 1;
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
    // The code fence that closes a matrix pasted without its legend.
    if (w[0].starts_with("```") || w[0].starts_with("~~~")) break;
    if (IsRule(w)) continue;
    if (!column.count(w[0])) {
      error(lines[r].number, "row '" + w[0] + "' is not a column of the header");
      continue;
    }
    {
      // The facts after the cells (affinities, "N/A") never split.
      std::vector<std::string> split{w[0]};
      for (size_t k = 1; k < w.size(); ++k) {
        for (std::string& cell : SplitRunTogetherCells(w[k])) split.push_back(std::move(cell));
      }
      w = std::move(split);
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
        // Drivers before about 2018 said SOC ("the SMP link between CPU
        // sockets") for what is SYS now.
        p = cell == "SOC" ? TopoPath::kSys : TopoPathFromName(cell);
        if (!p) {
          error(row_line[row->first], row->first + " -> " + devices[nic_cols[n]] + ": '" + cell +
                                          "' is not a PCIe path (PIX, PXB, PHB, NODE, SYS, SOC)");
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
  text = WithoutByteOrderMark(text);
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

namespace {

std::string_view TrimView(std::string_view s) {
  while (!s.empty() && isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

bool IsSystemStart(std::string_view line) {
  std::string_view t = TrimView(line);
  return t.substr(0, 7) == "<system" &&
         (t.size() == 7 || t[7] == '>' || isspace(static_cast<unsigned char>(t[7])));
}

bool IsMatrixHeaderLine(std::string_view line) {
  return IsHeader(HeaderWords(line)) || IsHeader(HeaderWords(WithoutCommentMark(line)));
}

// `rocm-smi --showtopo` prints GPU-by-GPU tables under the same kind of
// header ("GPU0  GPU1 ..."), whose rows have a number on the diagonal
// ("GPU0   0   52   52": weights, hops) where nvidia-smi has X.
bool IsRocmSmiRow(std::string_view line) {
  std::vector<std::string> w = Words(WithoutCommentMark(line));
  return w.size() >= 2 && w[0] == "GPU0" && SmallInt(w[1]).has_value();
}

// `nvidia-smi topo -p2p r|w|rw|a|...` prints a GPU-by-GPU table under the
// same header whose cells say whether peer access works ("OK", "GNS": GPU
// not supported, "CNS", "TNS", "NS", "DR", "U"), not the path: a row with
// only such cells and X belongs to no topology.
bool IsP2pStatusRow(std::string_view line) {
  static const std::set<std::string, std::less<>> kStatus = {"OK", "CNS", "GNS", "TNS",
                                                             "NS", "DR",  "U"};
  std::vector<std::string> w = Words(WithoutCommentMark(line));
  if (w.size() < 2 || !IsIndexed(w[0], "GPU")) return false;
  bool status = false;
  for (size_t k = 1; k < w.size(); ++k) {
    if (w[k] == "X") continue;
    if (!kStatus.count(w[k])) return false;
    status = true;
  }
  return status;
}

bool IsGraphLine(std::string_view raw) {
  const bool path = raw.find("NCCL INFO GPU/") != std::string_view::npos;
  const bool print = raw.find("=== System : max") != std::string_view::npos;
  if (!path && !print) return false;
  std::optional<NcclLogLine> line = SplitNcclLogLine(raw);
  if (!line) return print && TrimView(raw).substr(0, 16) == "=== System : max";  // bare paste
  if (print) return line->message.rfind("=== System : max", 0) == 0;
  return line->message.rfind("GPU/", 0) == 0 && line->message.find(" :") != std::string::npos;
}

// Byte offsets of each line's start.
std::vector<size_t> LineStarts(std::string_view text) {
  std::vector<size_t> out{0};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] == '\n' && i + 1 < text.size()) out.push_back(i + 1);
  }
  return out;
}

std::string_view LineAt(std::string_view text, const std::vector<size_t>& starts, size_t k) {
  size_t end = k + 1 < starts.size() ? starts[k + 1] : text.size();
  std::string_view l = text.substr(starts[k], end - starts[k]);
  while (!l.empty() && (l.back() == '\n' || l.back() == '\r')) l.remove_suffix(1);
  return l;
}

// The host a label line names: "=== node-a ===", "node-a:", "# gpu-b02",
// "2025/05/21 09:40:05 s114 nvidia-smi topo -m", "[root@gpu-b02 ~]# nvidia-smi
// topo -m"; "" when the line does not look like one.
std::string HostOfLabelWord(std::string_view line) {
  std::string_view t = TrimView(line);
  if (t.empty() || t.substr(0, 3) == "```" || t.front() == '<' || t.find(" = ") != t.npos) {
    return "";
  }
  if (size_t cmd = t.find("nvidia-smi"); cmd != std::string_view::npos) {
    std::string_view before = TrimView(t.substr(0, cmd));
    if (size_t at = before.find('@'); at != std::string_view::npos) {
      std::string_view host = before.substr(at + 1);
      size_t end = host.find_first_of(":~]$# ");
      return std::string(host.substr(0, end));
    }
    while (!before.empty() && strchr("$#>%", before.back()))
      before = TrimView(before.substr(0, before.size() - 1));
    size_t space = before.rfind(' ');
    return std::string(space == std::string_view::npos ? before : before.substr(space + 1));
  }
  if (size_t at = t.find('@'); at != std::string_view::npos && t.find(' ') > at) {
    std::string_view host = t.substr(at + 1);
    return std::string(host.substr(0, host.find_first_of(":~]$# ")));
  }
  while (!t.empty() && strchr("#=-*>[ ", t.front())) t.remove_prefix(1);
  while (!t.empty() && strchr("#=-*:] ", t.back())) t.remove_suffix(1);
  if (t.empty() || t.size() > 64 || t.find(' ') != std::string_view::npos) return "";
  // A legend or table line is not a label.
  if (t.rfind("NIC", 0) == 0 || t == "Legend") return "";
  return std::string(t);
}

// A shell's own prompt where no host is set ("sh-5.1#", "bash-4.4$", the
// default \s-\v): the shell and its version, not a node.
bool IsShellVersionPrompt(std::string_view word) {
  static const std::set<std::string, std::less<>> kShells = {"sh",   "bash", "zsh",  "ksh",
                                                             "dash", "ash",  "tcsh", "csh"};
  size_t dash = word.find('-');
  if (dash == std::string_view::npos || !kShells.count(word.substr(0, dash))) return false;
  std::string_view version = word.substr(dash + 1);
  return !version.empty() && isdigit(static_cast<unsigned char>(version.front())) &&
         version.find_first_not_of("0123456789.") == std::string_view::npos;
}

// Only a word a host name can be (letters, digits, '.', '-', '_', starting
// with a letter or digit): prose before a matrix ("... boxes (`nvidia-smi
// topo -m`, tidied up):") names no host.
std::string HostOfLabel(std::string_view line) {
  std::string host = HostOfLabelWord(line);
  if (host.empty() || !isalnum(static_cast<unsigned char>(host.front()))) return "";
  // The language a blog engine prints above a code block ("TEXT", then
  // the fenced matrix) is no node.
  static const std::set<std::string> kCodeCaptions = {"TEXT", "PLAINTEXT", "BASH",   "SHELL",
                                                      "SH",   "CONSOLE",   "OUTPUT", "CODE",
                                                      "TXT",  "LOG",       "PYTHON", "TERMINAL"};
  if (kCodeCaptions.count(host)) return "";
  if (IsShellVersionPrompt(host)) return "";
  for (char c : host) {
    if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return "";
  }
  return host;
}

struct Document {
  size_t first_line;  // index of its first line
  size_t end_line;    // one past its last line
  std::string host;
};

// A matrix's header: the line, and not a rocm-smi table (the next
// non-blank line is no rocm-smi row).
bool IsMatrixHeaderAt(std::string_view text, const std::vector<size_t>& starts, size_t k) {
  // As Lines() reads it: without the underline escapes of a terminal.
  if (!IsMatrixHeaderLine(StripAnsi(LineAt(text, starts, k)))) return false;
  for (size_t next = k + 1; next < starts.size(); ++next) {
    std::string_view l = LineAt(text, starts, next);
    if (!TrimView(l).empty()) return !IsRocmSmiRow(l) && !IsP2pStatusRow(l);
  }
  return true;
}

// The documents of a file that holds several: each starts at a line `starts`
// accepts; its label is the nearest non-blank line above (at most 3 back).
std::vector<Document> SplitDocuments(
    std::string_view text,
    const std::function<bool(std::string_view, const std::vector<size_t>&, size_t)>& starts_doc) {
  std::vector<size_t> starts = LineStarts(text);
  std::vector<Document> docs;
  for (size_t k = 0; k < starts.size(); ++k) {
    if (!starts_doc(text, starts, k)) continue;
    Document d{k, starts.size(), ""};
    size_t label_line = k;
    for (size_t back = 0; back < 3 && label_line > 0; ++back) {
      --label_line;
      if (!docs.empty() && label_line < docs.back().first_line + 1) break;
      std::string_view l = TrimView(LineAt(text, starts, label_line));
      if (l.empty() || l.substr(0, 3) == "```" || l.substr(0, 5) == "<?xml") continue;
      d.host = HostOfLabel(l);
      break;
    }
    if (!docs.empty()) docs.back().end_line = k;
    docs.push_back(std::move(d));
  }
  return docs;
}

// The lines of one document, the others' lines left blank so that line
// numbers stay the file's.
std::string DocumentText(std::string_view text, const Document& d) {
  std::vector<size_t> starts = LineStarts(text);
  std::string out(d.first_line, '\n');
  size_t begin = starts[d.first_line];
  size_t end = d.end_line < starts.size() ? starts[d.end_line] : text.size();
  out.append(text.substr(begin, end - begin));
  return out;
}

bool RocmSmiTables(std::string_view text) {
  std::vector<size_t> starts = LineStarts(text.substr(0, 1 << 20));
  for (size_t k = 0; k < starts.size(); ++k) {
    if (!IsMatrixHeaderLine(StripAnsi(LineAt(text, starts, k)))) continue;
    for (size_t next = k + 1; next < starts.size(); ++next) {
      std::string_view l = LineAt(text, starts, next);
      if (TrimView(l).empty()) continue;
      if (IsRocmSmiRow(l)) return true;
      break;
    }
  }
  return false;
}

// The part of a dump or print posted without its start (an excerpt that
// begins inside the tree): "" when the text holds none, else what it is and
// the line it starts on. Nothing is read from it: without the <system>
// element or the "=== System" line the tree has no root to hang it on.
std::string CutOffStart(std::string_view text, const std::string& file) {
  std::vector<size_t> starts = LineStarts(text.substr(0, 1 << 20));
  for (size_t k = 0; k < starts.size(); ++k) {
    std::string_view raw = LineAt(text, starts, k);
    std::string_view t = TrimView(raw);
    const std::string at = file + ":" + std::to_string(k + 1) + ": ";
    // NCCL_GRAPH_DUMP_FILE's output (NCCL_GRAPH_FILE's input) holds <gpu dev=>
    // elements too, but it is no excerpt of a topology: the rings and trees
    // NCCL chose, with no PCI path or NIC in them.
    if (t.starts_with("<graphs") || t.starts_with("<graph id=")) {
      return at +
             "an NCCL graph file (NCCL_GRAPH_DUMP_FILE: the rings and trees NCCL chose), not a "
             "topology: it names no PCI path or NIC, nothing to check (give the "
             "NCCL_TOPO_DUMP_FILE or the GRAPH debug print)";
    }
    if (t.starts_with("<pci busid=") || t.starts_with("<gpu dev=") || t.starts_with("<nic>") ||
        t.starts_with("<net name=")) {
      return at +
             "part of an NCCL topology dump without its <system> start (the first element "
             "here is a <" +
             std::string(t.substr(1, t.find_first_of(" >") - 1)) +
             ">): the start is cut off, nothing to check";
    }
    if (std::optional<NcclLogLine> line = SplitNcclLogLine(raw)) {
      std::string_view m = TrimView(line->message);
      const bool tree = m.starts_with("+ ") && m.find("] - ") != std::string_view::npos;
      if (tree) {
        return at +
               "part of an NCCL GRAPH print without its \"=== System : ...\" line: the start "
               "is cut off, nothing to check";
      }
    }
  }
  return "";
}

}  // namespace

namespace {

// pdsh's or clush's "node-a: " before every line of each node's output
// (`pdsh -w node[1-2] nvidia-smi topo -m`, the nodes' lines interleaved as
// they arrive): each node's lines, the prefix gone, with their numbers in the
// file. Empty when most lines have no such prefix.
struct PrefixedNode {
  std::string host;
  std::string text;
  std::vector<int> numbers;  // the file's line number of each line of `text`
};

std::vector<PrefixedNode> SplitHostPrefixed(std::string_view text) {
  auto prefix = [](std::string_view line) -> std::string_view {
    const size_t colon = line.find(": ");
    if (colon == std::string_view::npos || colon == 0 || colon > 64) return {};
    std::string_view host = line.substr(0, colon);
    if (!isalnum(static_cast<unsigned char>(host.front()))) return {};
    for (char c : host) {
      if (!isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') return {};
    }
    return host;
  };
  std::vector<size_t> starts = LineStarts(text);
  size_t content = 0, prefixed = 0;
  for (size_t k = 0; k < starts.size(); ++k) {
    std::string_view l = LineAt(text, starts, k);
    if (TrimView(l).empty()) continue;
    ++content;
    if (!prefix(l).empty()) ++prefixed;
  }
  if (prefixed < 2 || prefixed * 10 < content * 9) return {};
  std::vector<PrefixedNode> nodes;
  std::map<std::string, size_t, std::less<>> index;
  for (size_t k = 0; k < starts.size(); ++k) {
    std::string_view l = LineAt(text, starts, k);
    std::string_view host = prefix(l);
    if (host.empty()) continue;
    auto [it, added] = index.try_emplace(std::string(host), nodes.size());
    if (added) nodes.push_back({std::string(host), {}, {}});
    PrefixedNode& n = nodes[it->second];
    n.text.append(l.substr(host.size() + 2));
    n.text.push_back('\n');
    n.numbers.push_back(static_cast<int>(k) + 1);
  }
  return nodes;
}

// "file:N: what" of a node's own text as "file:M: what", M the file's line.
std::string InFileLines(const std::string& error, const std::string& file,
                        const std::vector<int>& numbers) {
  if (error.compare(0, file.size() + 1, file + ":") != 0) return error;
  const size_t from = file.size() + 1;
  const size_t colon = error.find(':', from);
  int n = 0;
  auto [end, ec] = std::from_chars(error.data() + from, error.data() + colon, n);
  if (colon == std::string::npos || ec != std::errc() || end != error.data() + colon || n < 1 ||
      numbers.empty())
    return error;
  const int line = numbers[std::min(static_cast<size_t>(n), numbers.size()) - 1];
  return file + ":" + std::to_string(line) + error.substr(colon);
}

}  // namespace

std::string SniffTopologyFormat(std::string_view text) {
  if (StartsWithSystemElement(text)) return "nccl_xml";
  {
    std::string_view head = text.substr(0, 1 << 20);
    std::vector<size_t> starts = LineStarts(head);
    for (size_t k = 0; k < starts.size(); ++k) {
      if (IsMatrixHeaderAt(head, starts, k)) return "nvidia_smi_topo";
    }
  }
  for (const Line& l : Lines(text.substr(0, 4 << 20))) {
    if (IsGraphLine(l.text)) return "nccl_graph";
  }
  // Dumps posted one after the other, each after a line naming its host,
  // or one after a sentence: a <system> line with its end, or with a <cpu>
  // or <pci> on the next line (a dump cut before </system>, which the XML
  // reader says), is one; prose naming the element inline is none.
  std::vector<size_t> starts = LineStarts(text);
  for (size_t k = 0; k < starts.size(); ++k) {
    if (!IsSystemStart(LineAt(text, starts, k))) continue;
    if (text.find("</system>", starts[k]) != std::string_view::npos) return "nccl_xml";
    for (size_t next = k + 1; next < starts.size(); ++next) {
      std::string_view t = TrimView(LineAt(text, starts, next));
      if (t.empty()) continue;
      if (t.starts_with("<cpu") || t.starts_with("<pci")) return "nccl_xml";
      break;
    }
  }
  return "";
}

std::vector<ParsedNodeTopology> ParseNodeTopologies(std::string_view text,
                                                    const std::string& file) {
  text = WithoutByteOrderMark(text);
  // A matrix or dump quoted whole in a reply ("> GPU0\t X ..."): read as posted.
  if (std::optional<std::string> plain = UnquoteReply(text))
    return ParseNodeTopologies(*plain, file);
  const std::string format = SniffTopologyFormat(text);
  if (format == "nccl_graph") return ParseNcclGraphHosts(text, file);
  std::vector<Document> docs;
  if (format == "nccl_xml") {
    docs = SplitDocuments(text, [](std::string_view t, const std::vector<size_t>& starts,
                                   size_t k) { return IsSystemStart(LineAt(t, starts, k)); });
  }
  if (format == "nvidia_smi_topo") docs = SplitDocuments(text, IsMatrixHeaderAt);
  auto parse = [&](std::string_view t) {
    return format == "nccl_xml" ? ParseNcclTopoXml(t, file) : ParseSmiTopoMatrix(t, file);
  };
  std::vector<ParsedNodeTopology> out;
  if (format.empty()) {
    // `pdsh -w node[1-2] nvidia-smi topo -m`: each node's lines read as its
    // own file, named by the prefix, problems at the file's lines.
    if (std::vector<PrefixedNode> nodes = SplitHostPrefixed(text); !nodes.empty()) {
      for (const PrefixedNode& n : nodes) {
        std::vector<ParsedNodeTopology> read = ParseNodeTopologies(n.text, file);
        for (ParsedNodeTopology& p : read) {
          p.host = read.size() == 1 || p.host.empty() ? n.host : n.host + "/" + p.host;
          for (std::string& e : p.errors) e = InFileLines(e, file, n.numbers);
          out.push_back(std::move(p));
        }
      }
      return out;
    }
    ParsedNodeTopology none;
    if (std::string cut = CutOffStart(text, file); !cut.empty()) {
      none.errors.push_back(std::move(cut));
      out.push_back(std::move(none));
      return out;
    }
    none.errors.push_back(
        file +
        ":1: neither an NCCL topology dump (<system>), an `nvidia-smi topo -m` "
        "matrix (a header of GPU0 ... columns) nor NCCL GRAPH debug lines" +
        (RocmSmiTables(text) ? " (`rocm-smi --showtopo` tables are not read)" : ""));
    out.push_back(std::move(none));
    return out;
  }
  if (docs.size() <= 1) {
    // One node: the whole text; a label line before a dump names its host.
    out.push_back(parse(text));
    if (docs.size() == 1) out.back().host = docs[0].host;
    return out;
  }
  std::map<std::string, int> seen;
  for (size_t i = 0; i < docs.size(); ++i) {
    ParsedNodeTopology p = parse(DocumentText(text, docs[i]));
    p.host = docs[i].host.empty() ? "dump" + std::to_string(i + 1) : docs[i].host;
    if (int n = ++seen[p.host]; n > 1) p.host += "#" + std::to_string(n);
    out.push_back(std::move(p));
  }
  return out;
}

ParsedNodeTopology ParseNodeTopology(std::string_view text, const std::string& file) {
  std::vector<ParsedNodeTopology> all = ParseNodeTopologies(text, file);
  return std::move(all.front());
}

}  // namespace fabtrack
