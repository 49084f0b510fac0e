#include "collector/parse/port_dump_sections.h"

#include <algorithm>
#include <map>
#include <set>
#include <utility>

#include "collector/parse/sysfs_values.h"
#include "core/text.h"

namespace fabtrack {
namespace {

std::string_view FirstWord(std::string_view s) {
  s = TrimBlanks(s);
  return s.substr(0, s.find_first_of(" \t"));
}

// Commands whose output or use shows up around port dumps: a `# WORD ...`
// line starting with one is a root prompt, any other a comment.
bool IsToolWord(std::string_view w) {
  static const std::set<std::string_view> words = {
      "ibstat",     "ibstatus",      "perfquery", "ibv_devinfo", "ethtool",
      "mlxlink",    "ibdev2netdev",  "cat",       "grep",        "head",
      "tail",       "for",           "cd",        "ls",          "sudo",
      "echo",       "find",          "mst",       "mlxconfig",   "ibnetdiscover",
      "iblinkinfo", "ibqueryerrors", "ibdiagnet", "ip",          "rdma",
      "lspci",      "nvidia-smi",    "show_gids", "while",       "pdsh",
      "clush",      "ssh",           "srun",      "dmesg",       "ibv_devices",
      "mlxreg"};
  return words.contains(w);
}

// Words that name a tool's output file rather than a host ("ibstat.txt").
bool IsDumpWord(std::string_view w) {
  return IsToolWord(w) || w == "sysfs" || w == "counters" || w == "hw_counters" || w == "ports" ||
         w == "node-check" || w == "nodecheck" || w == "dump" || w == "dumps";
}

bool HostChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '.';
}

// A host name as operators write them ("gpu-a", "amd01", "node-17.lab"):
// letters, digits, '-' and '.', with a digit, '-' or '.' somewhere, so that
// words ("State", "counters") are not hosts. No '_': sysfs and driver names
// have them, host names do not.
bool IsHostName(std::string_view s) {
  if (s.empty() || s.size() > 253 || !std::isalnum(static_cast<unsigned char>(s.front())))
    return false;
  bool marked = false;
  for (char c : s) {
    if (!HostChar(c)) return false;
    if (c == '-' || c == '.' || (c >= '0' && c <= '9')) marked = true;
  }
  // Interface and HCA names ("=== ib0 ===", "==> eth2.txt <==") are not hosts.
  for (std::string_view nic : {"ib", "eth", "ens", "enp", "eno", "bond", "hsn", "mlx", "roce"}) {
    if (s.starts_with(nic) && s.size() > nic.size() &&
        std::isdigit(static_cast<unsigned char>(s[nic.size()])))
      return false;
  }
  return marked && !IsDumpWord(s);
}

// A shell prompt word ("gpu-a", "localhost"): looser, the prompt's shape
// already says it is a host.
bool IsPromptHost(std::string_view s) {
  if (s.empty()) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return HostChar(c) || c == '_'; });
}

struct Prompt {
  std::optional<std::string> host;
  std::optional<std::string> cwd;
  std::string command;
};

std::string CommandAfter(std::string_view rest) {
  rest = TrimBlanks(rest);
  if (rest.starts_with("sudo ")) rest = TrimBlanks(rest.substr(5));
  return std::string(rest);
}

// "[root@gpu-a ~]# ibstat", "[gpu-a]$ ibstat", "user@gpu-a:/sys/...$ grep . *",
// "/sys/class/infiniband/mlx5_0/ports/1/counters$ for f in *; ...",
// "$ ibstat", "# perfquery -x" (a root prompt when a tool follows), "gpu-a$ ibstat".
std::optional<Prompt> ParsePrompt(std::string_view line) {
  std::string_view s = TrimBlanks(line);
  if (s.empty()) return std::nullopt;
  Prompt p;
  auto end_mark = [](std::string_view rest, size_t at) {
    return at < rest.size() && (rest[at] == '$' || rest[at] == '#') &&
           (at + 1 == rest.size() || rest[at + 1] == ' ');
  };
  if (s.front() == '[') {
    const size_t close = s.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    std::string_view inner = TrimBlanks(s.substr(1, close - 1));
    std::string_view rest = s.substr(close + 1);
    size_t at = 0;
    while (at < rest.size() && rest[at] == ' ') ++at;
    if (!end_mark(rest, at)) return std::nullopt;
    const size_t user = inner.find('@');
    std::string_view who = user == std::string_view::npos ? inner : inner.substr(user + 1);
    const size_t cut = who.find_first_of(" :");
    std::string_view host = who.substr(0, cut);
    if (!IsPromptHost(host)) return std::nullopt;
    p.host = std::string(host);
    if (cut != std::string_view::npos) p.cwd = std::string(TrimBlanks(who.substr(cut + 1)));
    p.command = CommandAfter(rest.substr(at + 1));
    return p;
  }
  // "> ethtool -S enp66s0f0": a command quoted in a markdown post (or a
  // Windows/PS2 prompt) before its output; only with a tool after it.
  if (s.front() == '$' || s.front() == '#' || s.front() == '>') {
    // "#ibv_devinfo -d mlx4_1 -i 2 -v": a how-to's root prompt written
    // without its space, taken only with a tool word right after it.
    if (s.size() > 1 && s[1] != ' ' &&
        (s.front() != '#' || !IsToolWord(FirstWord(CommandAfter(s.substr(1))))))
      return std::nullopt;
    p.command = CommandAfter(s.substr(1));
    if (s.front() != '$' && !IsToolWord(FirstWord(p.command))) return std::nullopt;
    return p;
  }
  // One word up to the first "$ " or "# ": user@host:cwd, /path, ~/path, host.
  size_t mark = std::string_view::npos;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == ' ' || s[i] == '\t') break;
    if (end_mark(s, i)) {
      mark = i;
      break;
    }
  }
  if (mark == std::string_view::npos || mark == 0) return std::nullopt;
  std::string_view word = s.substr(0, mark);
  p.command = CommandAfter(s.substr(mark + 1));
  if (word.front() == '/' || word.front() == '~') {
    p.cwd = std::string(word);
    return p;
  }
  const size_t user = word.find('@');
  std::string_view who = user == std::string_view::npos ? word : word.substr(user + 1);
  const size_t colon = who.find(':');
  std::string_view host = who.substr(0, colon);
  if (colon != std::string_view::npos) p.cwd = std::string(who.substr(colon + 1));
  if (user == std::string_view::npos) {
    // The shell's next prompt, with nothing typed after it, where the copy
    // of a terminal ends ("sh-5.1#", bash's default; "gpu-a$"):
    // the end of the output above, naming no host (bash's word is none).
    if (p.command.empty() && mark + 1 == s.size() && IsPromptHost(host)) return p;
    // "gpu-a$ ibstat", "gpu-a:~$ ibstat": only with a host-like word and a tool.
    if (!IsHostName(host) || !IsToolWord(FirstWord(p.command))) return std::nullopt;
  } else if (!IsPromptHost(host) || !IsPromptHost(word.substr(0, user))) {
    return std::nullopt;
  }
  p.host = std::string(host);
  return p;
}

// "=== NAME ===", "==> NAME <==", "--- NAME ---": the name; false otherwise.
bool HeaderName(std::string_view s, std::string_view* name) {
  s = TrimBlanks(s);
  if (s.starts_with("==>") && s.ends_with("<==") && s.size() > 6) {
    *name = TrimBlanks(s.substr(3, s.size() - 6));
    return !name->empty();
  }
  for (char c : {'=', '-', '*'}) {
    size_t a = 0, b = s.size();
    while (a < s.size() && s[a] == c) ++a;
    while (b > a && s[b - 1] == c) --b;
    if (a >= 3 && s.size() - b >= 3) {
      *name = TrimBlanks(s.substr(a, b - a));
      return !name->empty() && name->find_first_of(" \t") == std::string_view::npos;
    }
  }
  return false;
}

bool IsSeparator(std::string_view s) {
  s = TrimBlanks(s);
  if (s.starts_with("```") || s.starts_with("~~~")) return true;
  // HTML around a paste copied from an issue page: "<pre>", "</details>".
  if (s.size() >= 3 && s.front() == '<' && s.back() == '>' && s[1] != '=' && s[1] != '-')
    return true;
  if (s.size() < 3) return false;
  return std::all_of(s.begin(), s.end(), [](char c) { return c == '-' || c == '='; });
}

}  // namespace

std::string HostOfFileName(std::string_view path) {
  if (size_t slash = path.rfind('/'); slash != std::string_view::npos)
    path.remove_prefix(slash + 1);
  return std::string(path.substr(0, path.find('.')));
}

namespace {

std::vector<DumpLine> Lines(std::string_view text) {
  std::vector<DumpLine> lines;
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back({++number, line});
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

// Non-blank lines from `from` up to the next header, separator, prompt or
// blank.
size_t BodyLines(const std::vector<DumpLine>& lines, size_t from) {
  size_t n = 0;
  std::string_view name;
  for (size_t i = from; i < lines.size(); ++i) {
    std::string_view t = TrimBlanks(lines[i].text);
    if (t.empty() || IsSeparator(t) || HeaderName(t, &name) || ParsePrompt(lines[i].text)) break;
    ++n;
  }
  return n;
}

struct HostPart {
  std::optional<std::string> host;
  std::vector<DumpLine> lines;
};

// pdsh/clush's "gpu-a: text" prefixes on most lines: each line to its host,
// the prefix gone. Empty when the document is not that.
std::vector<HostPart> SplitPrefixed(const std::vector<DumpLine>& lines) {
  size_t content = 0, prefixed = 0;
  auto prefix = [](std::string_view t) -> std::string_view {
    const size_t colon = t.find(": ");
    if (colon == std::string_view::npos || !IsHostName(t.substr(0, colon))) return {};
    return t.substr(0, colon);
  };
  for (const DumpLine& l : lines) {
    if (TrimBlanks(l.text).empty()) continue;
    ++content;
    if (!prefix(l.text).empty()) ++prefixed;
  }
  if (prefixed < 2 || prefixed * 10 < content * 6) return {};
  std::vector<HostPart> parts;
  std::map<std::string, size_t, std::less<>> index;
  size_t current = 0;
  for (const DumpLine& l : lines) {
    std::string_view host = prefix(l.text);
    if (host.empty()) {
      if (!parts.empty()) parts[current].lines.push_back(l);
      continue;
    }
    auto [it, added] = index.try_emplace(std::string(host), parts.size());
    if (added) parts.push_back({std::string(host), {}});
    current = it->second;
    parts[current].lines.push_back({l.number, l.text.substr(host.size() + 2)});
  }
  return parts;
}

// "version: 2.3LK-NAPI", "bus-info: 0000:01:00.0", "firmware-version:": a
// line of an unindented key/value list (`ethtool -i`), among which a
// "firmware-version:" with its value empty is a key, not a host's header.
bool IsKeyListLine(std::string_view raw) {
  if (raw.empty() || raw.front() == ' ' || raw.front() == '\t') return false;
  const size_t colon = raw.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view key = raw.substr(0, colon);
  if (key == "hca_id") return false;  // ibv_devinfo's first line
  return std::all_of(key.begin(), key.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
  });
}

// The host a line names as the start of its part, and whether the line is
// only that marker (dropped) or also a prompt (kept).
std::optional<std::string> HostMarker(const std::vector<DumpLine>& lines, size_t i, bool* drop) {
  const std::string_view t = TrimBlanks(lines[i].text);
  *drop = true;
  std::string_view name;
  if (HeaderName(t, &name)) {
    // A file's header with one value under it is a sysfs file, not a host.
    if (BodyLines(lines, i + 1) < 2) return std::nullopt;
    std::string host = HostOfFileName(name);
    if (!IsHostName(host)) return std::nullopt;
    return host;
  }
  if (t.starts_with("##")) {
    const size_t text = t.find_first_not_of('#');
    if (text == std::string_view::npos) return std::nullopt;
    std::string_view rest = TrimBlanks(t.substr(text));
    for (std::string_view word : {"host", "Host", "node", "Node", "HOST", "NODE"}) {
      if (rest.starts_with(word) && rest.size() > word.size() &&
          (rest[word.size()] == ' ' || rest[word.size()] == ':')) {
        rest = TrimBlanks(rest.substr(word.size() + 1));
      }
    }
    if (rest.ends_with(':')) rest.remove_suffix(1);
    if (IsHostName(rest)) return std::string(rest);
    return std::nullopt;
  }
  if (t.ends_with(':') && IsHostName(t.substr(0, t.size() - 1))) {
    const bool in_key_list = (i > 0 && IsKeyListLine(lines[i - 1].text)) ||
                             (i + 1 < lines.size() && IsKeyListLine(lines[i + 1].text));
    if (in_key_list) return std::nullopt;
    return std::string(t.substr(0, t.size() - 1));
  }
  // clush -b / dshbak: a host name between two dashed lines.
  if (i > 0 && i + 1 < lines.size() && IsSeparator(lines[i - 1].text) &&
      IsSeparator(lines[i + 1].text) && IsHostName(t)) {
    return std::string(t);
  }
  // Ansible's ad-hoc output: "gpu-a | CHANGED | rc=0 >>".
  if (const size_t bar = t.find(" | "); bar != std::string_view::npos && t.ends_with(">>")) {
    std::string_view host = t.substr(0, bar);
    std::string_view status = FirstWord(t.substr(bar + 3));
    if (IsPromptHost(host) && (status == "CHANGED" || status == "SUCCESS" || status == "FAILED"))
      return std::string(host);
  }
  if (std::optional<Prompt> p = ParsePrompt(lines[i].text); p && p->host) {
    *drop = false;
    return p->host;
  }
  return std::nullopt;
}

std::vector<HostPart> SplitHosts(const std::vector<DumpLine>& lines) {
  if (std::vector<HostPart> parts = SplitPrefixed(lines); !parts.empty()) {
    if (parts.size() == 1) parts[0].host.reset();
    return parts;
  }
  std::vector<std::pair<size_t, std::string>> marks;
  std::vector<bool> drop(lines.size(), false);
  std::set<std::string> named;
  for (size_t i = 0; i < lines.size(); ++i) {
    bool dropped = false;
    if (std::optional<std::string> host = HostMarker(lines, i, &dropped)) {
      marks.emplace_back(i, *host);
      drop[i] = dropped;
      named.insert(*host);
    }
  }
  if (named.size() < 2) return {HostPart{std::nullopt, lines}};
  std::vector<HostPart> parts;
  std::map<std::string, size_t> index;
  size_t current = 0;
  if (marks.front().first > 0) {
    parts.push_back({std::nullopt, {}});
  }
  size_t next_mark = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (next_mark < marks.size() && marks[next_mark].first == i) {
      auto [it, added] = index.try_emplace(marks[next_mark].second, parts.size());
      if (added) parts.push_back({marks[next_mark].second, {}});
      current = it->second;
      ++next_mark;
    }
    if (!drop[i]) parts[current].lines.push_back(lines[i]);
  }
  return parts;
}

bool StrictKey(std::string_view t, std::string_view* key, std::string_view* value) {
  const size_t colon = t.find(':');
  if (colon == std::string_view::npos || colon == 0) return false;
  if (t[colon - 1] == ' ' || t[colon - 1] == '\t') return false;
  *key = t.substr(0, colon);
  *value = TrimBlanks(t.substr(colon + 1));
  return true;
}

bool IsPerfqueryHeader(std::string_view t) {
  return t.starts_with("# Port") && t.find("counters:") != std::string_view::npos;
}

bool IsSysfsLine(std::string_view t) {
  return t.starts_with("/sys/") && t.find("/infiniband/") != std::string_view::npos;
}

std::optional<PortDumpFormat> StartsSection(std::string_view t) {
  if (t.starts_with("CA '")) return PortDumpFormat::kIbstat;
  if (t.starts_with("Infiniband device '")) return PortDumpFormat::kIbstatus;
  if (IsPerfqueryHeader(t)) return PortDumpFormat::kPerfquery;
  if (t.starts_with("hca_id:")) return PortDumpFormat::kIbvDevinfo;
  if (IsNicStatisticsLine(t)) return PortDumpFormat::kEthtool;
  if (IsSysfsLine(t)) return PortDumpFormat::kSysfs;
  return std::nullopt;
}

// "ethtool -S ens1f0 | grep prio", "sudo ethtool --statistics eth2".
bool IsEthtoolStatisticsCommand(std::string_view command) {
  if (command.starts_with("sudo ")) command.remove_prefix(5);
  if (!command.starts_with("ethtool ")) return false;
  command = command.substr(0, command.find('|'));
  return command.find(" -S ") != std::string_view::npos ||
         command.find(" --statistics ") != std::string_view::npos;
}

// "rx_prio3_pause: 2210", "[0]: rx_bytes: 5", also with a note after the
// number ("rx_discards_phy: 0   <- must stay zero").
bool IsEthtoolStatisticLine(std::string_view t) {
  const size_t colon = t.find(": ");
  if (colon == std::string_view::npos || colon == 0) return false;
  std::string_view value = TrimBlanks(t.substr(t.rfind(':') + 1));
  value = value.substr(0, value.find_first_of(" \t"));
  return !value.empty() &&
         std::all_of(value.begin(), value.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool Indented(std::string_view raw) {
  return !raw.empty() && (raw.front() == ' ' || raw.front() == '\t');
}

bool Numeric(std::string_view v) {
  if (v.starts_with("-")) v.remove_prefix(1);
  return !v.empty() && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Whether a line inside `format`'s section is still its output: each tool's
// own keys and shapes, so that another tool's "State : Active" (mlxlink) or
// a cut "        bas" ends it.
bool Owns(PortDumpFormat format, std::string_view raw, std::string_view t) {
  std::string_view key, value;
  switch (format) {
    case PortDumpFormat::kIbstat: {
      static const std::set<std::string_view> keys = {"CA type",
                                                      "Number of ports",
                                                      "Firmware version",
                                                      "Hardware version",
                                                      "Node GUID",
                                                      "System image GUID",
                                                      "State",
                                                      "Physical state",
                                                      "Rate",
                                                      "Base lid",
                                                      "LMC",
                                                      "SM lid",
                                                      "Capability mask",
                                                      "Port GUID",
                                                      "Link layer"};
      if (t.starts_with("CA '") || (t.starts_with("Port ") && t.ends_with(":"))) return true;
      return StrictKey(t, &key, &value) && keys.contains(key);
    }
    case PortDumpFormat::kIbstatus: {
      static const std::set<std::string_view> keys = {
          "default gid", "base lid", "sm lid", "state", "phys state", "rate", "link_layer"};
      if (t.starts_with("Infiniband device '")) return true;
      return StrictKey(t, &key, &value) && keys.contains(key);
    }
    case PortDumpFormat::kPerfquery:
      if (IsPerfqueryHeader(t) || t.starts_with("#")) return true;
      // The header's end on a line of its own where a mail client wrapped it
      // ("# Port extended counters: Lid 21 port 1 (CapMask: 0x1600 CapMask2:"
      // then "0x0000000)").
      if (t.ends_with(")") && t.find_first_of(": ") == std::string_view::npos) return true;
      return StrictKey(t, &key, &value) && std::all_of(key.begin(), key.end(), [](char c) {
               return std::isalnum(static_cast<unsigned char>(c));
             });
    case PortDumpFormat::kIbvDevinfo:
      if (t.starts_with("hca_id:") || Indented(raw)) return true;
      return StrictKey(t, &key, &value) && std::all_of(key.begin(), key.end(), [](char c) {
               return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '[' ||
                      c == ']' || c == ' ';
             });
    case PortDumpFormat::kEthtool: {
      if (Indented(raw)) return true;
      const size_t colon = t.rfind(':');  // "[0]: rx_bytes: 5"
      return colon != std::string_view::npos && colon > 0 && t[colon - 1] != ' ' &&
             Numeric(TrimBlanks(t.substr(colon + 1)));
    }
    case PortDumpFormat::kSysfs:
      return IsSysfsLine(t) || t.starts_with("#") || t.starts_with("grep: ") ||
             t.starts_with("cat: ") || t.starts_with("tail: ") || t.starts_with("head: ");
  }
  return false;
}

// Where a bare sysfs file name lives under ports/N/.
std::string_view DirOf(std::string_view name) {
  static const std::set<std::string_view> port_files = {
      "state",          "phys_state", "rate",  "link_layer", "lid",
      "lid_mask_count", "sm_lid",     "sm_sl", "cap_mask"};
  if (port_files.contains(name)) return "";
  for (const SysfsLegacyCounter& c : kSysfsLegacyCounters) {
    if (name == c.name) return "counters/";
  }
  for (std::string_view n : {"unicast_xmit_packets", "unicast_rcv_packets",
                             "multicast_xmit_packets", "multicast_rcv_packets"}) {
    if (name == n) return "counters/";
  }
  for (const SysfsExtName& x : kSysfsExtNames) {
    if (name == x.file) return "counters_ext/";
  }
  return "hw_counters/";
}

class Scanner {
 public:
  Scanner(const PortDumpContext& context, std::deque<std::string>* made, HostSections* out)
      : context_(context), made_(made), out_(out) {}

  void Scan(const std::vector<DumpLine>& lines) {
    for (const DumpLine& l : lines) {
      if (!TrimBlanks(l.text).empty()) out_->last_line = l.number;
    }
    if (!lines.empty()) out_->first_line = lines.front().number;
    for (size_t i = 0; i < lines.size(); ++i) i = Line(lines, i);
  }

 private:
  // Handles lines[i] (and what belongs to it); the index of the last line used.
  size_t Line(const std::vector<DumpLine>& lines, size_t i) {
    const DumpLine& l = lines[i];
    const std::string_view t = TrimBlanks(l.text);
    if (t.empty()) {
      if (current_) Current().lines.push_back(l);
      return i;
    }
    std::string_view name;
    if (HeaderName(t, &name)) {
      const size_t body = BodyLines(lines, i + 1);
      if (body > 1) {
        End();
        return i;  // a section's title ("=== ibstat ===") or a host file's header
      }
      // A file's header: its one value line (none: the dump ends or the
      // file was empty).
      std::string_view value;
      int number = l.number;
      size_t used = i;
      if (body == 1) {
        value = TrimBlanks(lines[i + 1].text);
        number = lines[i + 1].number;
        used = i + 1;
      } else if (l.number >= out_->last_line) {
        out_->errors.push_back({l.number, "cut off: the dump ends at the header of " +
                                              std::string(name) + ", before its value"});
        return i;
      } else if (i + 1 < lines.size() && TrimBlanks(lines[i + 1].text).empty()) {
        // A blank line under it, not a value: the title of what follows
        // ("========== mt4123_pciconf0 ==========" and mlxlink's output in a
        // node check's loop), or an empty file of `tail -n +1` (nothing to
        // read either way), not a file of a cat loop.
        End();
        return i;
      }
      AddFileValue(name, value, number, l.number);
      return used;
    }
    if (IsSeparator(t)) {
      End();
      return i;
    }
    if (std::optional<Prompt> p = ParsePrompt(l.text)) {
      End();
      if (p->cwd) SetCwd(*p->cwd, /*from_prompt=*/true);
      if (p->command.starts_with("cd ")) SetCwd(TrimBlanks(p->command.substr(3)), false);
      command_ = p->command.empty() ? std::nullopt : std::optional<std::string>(p->command);
      last_command_ = p->command;
      // "$ cat /sys/class/infiniband/mlx5_0/ports/1/counters/port_xmit_wait"
      // and the value on the next line.
      cat_path_.reset();
      if (p->command.starts_with("cat ")) {
        std::string_view file = TrimBlanks(std::string_view(p->command).substr(4));
        if (!file.empty() && file.find_first_of(" *?{|>") == std::string_view::npos)
          cat_path_ = Resolve(file);
      }
      return i;
    }
    if (t.starts_with("cd /")) {
      End();
      SetCwd(TrimBlanks(t.substr(3)), false);
      return i;
    }
    // `ethtool -S IFACE | grep ...` kept without a prompt sign above what it
    // printed (a post's fence): ethtool's output never starts so, it is the
    // command, and it names the interface.
    if (IsEthtoolStatisticsCommand(t)) {
      End();
      command_ = std::string(t);
      last_command_ = std::string(t);
      return i;
    }
    // A loop kept without its prompt ("for i in *; do printf ... "$i"
    // "$(<$i)"; done" under a `cd` line): what it prints follows.
    if (t.starts_with("for ") && t.find("; do ") != std::string_view::npos) {
      End();
      last_command_ = std::string(t);
      return i;
    }
    // A sysfs file's value is a word or a few ("4: ACTIVE", "400 Gb/sec (4X
    // NDR)", "N/A (no PMA)"); a sentence after `cat notes.txt` is what the
    // file said, not a port file's value.
    if (std::optional<std::string> path = std::exchange(cat_path_, std::nullopt);
        path && path->find("/infiniband/") != std::string::npos && !StartsSection(t) &&
        SplitBlanks(t).size() <= 4) {
      AddSysfs(*path + " " + std::string(t), l.number);
      return i;
    }
    // `grep -H . infiniband/*/ports/*/counters/*` run in /sys/class:
    // "infiniband/mlx5_0/ports/1/counters/port_xmit_wait:0".
    if (t.starts_with("infiniband/") && t.find('/', 11) != std::string_view::npos &&
        t.find_first_of(": ") != std::string_view::npos) {
      AddSysfs("/sys/class/" + std::string(t), l.number);
      return i;
    }
    if (current_ && Owns(Current().format, l.text, t)) {
      Current().lines.push_back(l);
      last_owned_ = i;
      return i;
    }
    if (std::optional<PortDumpFormat> format = StartsSection(t)) {
      Start(*format);
      Current().lines.push_back(l);
      last_owned_ = i;
      return i;
    }
    // `ethtool -S IFACE | grep prio`: the filter dropped "NIC statistics:",
    // the command kept above says what the indented "name: value" lines are.
    if (!current_ && command_ && IsEthtoolStatisticsCommand(*command_) && Indented(l.text) &&
        IsEthtoolStatisticLine(t)) {
      Start(PortDumpFormat::kEthtool);
      Current().lines.push_back(l);
      last_owned_ = i;
      return i;
    }
    if (RelativeSysfsLine(t, l.number)) return i;
    if (RelativeLoopLine(t, l.number)) return i;
    // A comment the one who saved it wrote between a tool's lines
    // ("                # Link layer: Ethernet means RoCE"): skipped, the
    // tool's output goes on below it.
    if (t.starts_with("#")) return i;
    // No tool's line: a prompt's echo, another tool's output (mlxlink),
    // prose. Right after a section it may be the section cut short.
    if (current_) {
      if (last_owned_ + 1 == i) {
        Current().broken_by = l.number;
        Current().broken_text = t;
      }
      End();
    }
    return i;
  }

  DumpSection& Current() { return out_->sections[*current_]; }
  void End() { current_.reset(); }
  void Start(PortDumpFormat format) {
    out_->sections.push_back({format, command_, {}, 0, {}});
    command_.reset();
    current_ = out_->sections.size() - 1;
  }

  // The directory the next files are named in. A prompt shows an absolute
  // one or only its last name ("[root@gpu-a counters]#": the same place as
  // the `cd` before it); `cd NAME` goes below the one known.
  void SetCwd(std::string_view dir, bool from_prompt) {
    while (dir.size() > 1 && dir.back() == '/') dir.remove_suffix(1);
    if (dir.starts_with("/")) {
      if (dir.find("/infiniband/") != std::string_view::npos && dir.starts_with("/sys/")) {
        cwd_ = std::string(dir);
      } else {
        cwd_.reset();
      }
      return;
    }
    if (from_prompt || dir.empty()) return;
    if (dir.starts_with("~")) {
      cwd_.reset();
    } else if (cwd_ && dir != ".") {
      cwd_ = *cwd_ + "/" + std::string(dir);
    }
  }

  // The sysfs path of a file named relative to the directory the dump was
  // taken in: the prompt's or a `cd` line's, else --device/--port's port.
  std::optional<std::string> Resolve(std::string_view name) {
    if (name.starts_with("\"") && name.ends_with("\"") && name.size() >= 2)
      name = name.substr(1, name.size() - 2);
    if (name.starts_with("/")) return std::string(name);
    while (name.starts_with("./")) name.remove_prefix(2);
    if (cwd_) return *cwd_ + "/" + std::string(name);
    if (!context_.device) return std::nullopt;
    std::string base = "/sys/class/infiniband/" + *context_.device + "/ports/" +
                       std::to_string(context_.port.value_or(1)) + "/";
    if (name.find('/') != std::string_view::npos) return base + std::string(name);
    return base + std::string(DirOf(name)) + std::string(name);
  }

  void AddFileValue(std::string_view name, std::string_view value, int number, int header) {
    std::optional<std::string> path = Resolve(name);
    if (!path) {
      out_->errors.push_back(
          {header, std::string(name) +
                       ": a file of no known directory (keep the prompt or `cd` line with its "
                       "/sys/class/infiniband/DEV/ports/N/... directory, or give --device and "
                       "--port)"});
      return;
    }
    AddSysfs(*path + " " + std::string(value), number);
  }

  void AddSysfs(std::string line, int number) {
    made_->push_back(std::move(line));
    if (!current_ || Current().format != PortDumpFormat::kSysfs) Start(PortDumpFormat::kSysfs);
    Current().lines.push_back({number, made_->back()});
  }

  // `grep . *` or `grep . counters/*` run in a port's directory: "NAME:VALUE".
  bool RelativeSysfsLine(std::string_view t, int number) {
    if (FirstWord(last_command_) != "grep") return false;
    const size_t colon = t.find(':');
    if (colon == std::string_view::npos || colon == 0) return false;
    std::string_view name = t.substr(0, colon);
    if (!std::all_of(name.begin(), name.end(), [](char c) {
          return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' ||
                 c == '-';
        })) {
      return false;
    }
    std::optional<std::string> path = Resolve(name);
    if (!path) return false;
    AddSysfs(*path + ":" + std::string(t.substr(colon + 1)), number);
    return true;
  }

  // `for f in *; do echo "$f $(cat $f)"; done` (or printf "%-20s %s") run in
  // a port's directory: "NAME VALUE", the name relative to it. Only a number
  // (or "N/A ...") is a value, so prose after the loop ends it; a name with
  // no value is taken only as the dump's last line, where the sysfs reader
  // says it is cut off.
  bool RelativeLoopLine(std::string_view t, int number) {
    if (FirstWord(last_command_) != "for") return false;
    const size_t gap = t.find_first_of(" \t");
    std::string_view name = t.substr(0, gap);
    std::string_view value = gap == std::string_view::npos ? "" : TrimBlanks(t.substr(gap));
    const bool file_name = std::all_of(name.begin(), name.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '/' || c == '.' ||
             c == '-';
    });
    const bool a_value = value.empty() ? number >= out_->last_line
                                       : std::isdigit(static_cast<unsigned char>(value.front())) ||
                                             value.starts_with("N/A");
    if (!file_name || name.starts_with("/") || !a_value) {
      last_command_.clear();  // the loop's output ended
      return false;
    }
    std::optional<std::string> path = Resolve(name);
    if (!path) return false;
    AddSysfs(*path + " " + std::string(value), number);
    return true;
  }

  const PortDumpContext& context_;
  std::deque<std::string>* made_;
  HostSections* out_;
  std::optional<size_t> current_;
  size_t last_owned_ = static_cast<size_t>(-2);
  std::optional<std::string> command_;
  std::string last_command_;
  std::optional<std::string> cwd_;
  std::optional<std::string> cat_path_;  // the file a `cat FILE` prompt prints next
};

}  // namespace

bool IsNicStatisticsLine(std::string_view trimmed) {
  if (!trimmed.starts_with("NIC statistics:")) return false;
  std::string_view rest = TrimBlanks(trimmed.substr(15));
  return rest.empty() || rest.starts_with("#");
}

std::vector<HostSections> SplitPortDumpDocument(std::string_view text,
                                                const PortDumpContext& context,
                                                std::deque<std::string>* made) {
  std::vector<HostSections> hosts;
  for (HostPart& part : SplitHosts(Lines(text))) {
    HostSections& h = hosts.emplace_back();
    h.host = part.host;
    Scanner(context, made, &h).Scan(part.lines);
  }
  return hosts;
}

}  // namespace fabtrack
