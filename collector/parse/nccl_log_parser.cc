#include "collector/parse/nccl_log_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "collector/parse/nccl_log_line.h"

namespace fabtrack {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string_view TrimLeft(std::string_view s) {
  while (!s.empty() && IsBlank(s.front())) s.remove_prefix(1);
  return s;
}

std::string_view Trim(std::string_view s) {
  s = TrimLeft(s);
  while (!s.empty() && IsBlank(s.back())) s.remove_suffix(1);
  return s;
}

// Whole-string non-negative integer; nullopt for anything else.
std::optional<int64_t> ToInt(std::string_view s) {
  if (s.empty() || !IsDigit(s.front())) return std::nullopt;
  int64_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> ToSmallInt(std::string_view s) {
  std::optional<int64_t> v = ToInt(s);
  if (!v || *v > INT32_MAX) return std::nullopt;
  return static_cast<int>(*v);
}

// Leading run of digits ("12" of "12abc").
std::string_view LeadingDigits(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && IsDigit(s[n])) ++n;
  return s.substr(0, n);
}

std::vector<std::string_view> SplitWords(std::string_view s) {
  std::vector<std::string_view> words;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsBlank(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    if (i > start) words.push_back(s.substr(start, i - start));
  }
  return words;
}

std::vector<std::string_view> SplitOn(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts.push_back(s.substr(start));
      return parts;
    }
    parts.push_back(s.substr(start, pos - start));
    start = pos + 1;
  }
}

void AddDistinct(std::vector<std::string>* list, std::string_view value) {
  if (value.empty()) return;
  if (std::find(list->begin(), list->end(), value) == list->end()) list->emplace_back(value);
}

void Report(std::vector<ParseError>* errors, int line, std::string message) {
  if (errors != nullptr) errors->push_back(ParseError{line, std::move(message)});
}

// "NCCL version 2.19.3+cuda12.3" (bare banner, or the message of a 2.27+ INFO
// line). The first version seen wins: a mismatch between ranks is NCCL's own
// WARN, which lands in `warnings`.
void TakeVersion(std::string_view message, NcclLogInfo* info) {
  constexpr std::string_view kPrefix = "NCCL version ";
  if (!StartsWith(message, kPrefix) || info->nccl_version) return;
  std::vector<std::string_view> words = SplitWords(message.substr(kPrefix.size()));
  // "NCCL version mismatch ..." and similar prose is not a version.
  if (words.empty() || !IsDigit(words[0].front())) return;
  std::string_view token = words[0];
  size_t plus = token.find('+');
  info->nccl_version = std::string(token.substr(0, plus));
  if (plus != std::string_view::npos && StartsWith(token.substr(plus + 1), "cuda") &&
      token.size() > plus + 5) {
    info->cuda_version = std::string(token.substr(plus + 5));
  }
}

// Splits "NET/IB : Using ..." / "NET/IBext: No device found." after the
// transport name into what follows the colon. The name may carry a suffix
// ("NET/IBext") and the colon may or may not have a blank before it.
std::optional<std::string_view> AfterNetColon(std::string_view message, std::string_view name) {
  if (!StartsWith(message, name)) return std::nullopt;
  std::string_view rest = message.substr(name.size());
  while (!rest.empty() &&
         (std::isalnum(static_cast<unsigned char>(rest.front())) || rest.front() == '_')) {
    rest.remove_prefix(1);
  }
  rest = TrimLeft(rest);
  if (rest.empty() || rest.front() != ':') return std::nullopt;
  return TrimLeft(rest.substr(1));
}

// "[0]mlx5_0:1/RoCE" -> index 0, "mlx5_0:1/RoCE".
std::optional<std::pair<int, std::string_view>> SplitIndexedEntry(std::string_view token) {
  if (token.empty() || token.front() != '[') return std::nullopt;
  size_t close = token.find(']');
  if (close == std::string_view::npos) return std::nullopt;
  std::optional<int> index = ToSmallInt(token.substr(1, close - 1));
  if (!index) return std::nullopt;
  return std::make_pair(*index, token.substr(close + 1));
}

// One entry of "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE/SHARP".
std::optional<NetDevice> ParseIbDevice(std::string_view token, const std::string& host) {
  auto entry = SplitIndexedEntry(token);
  if (!entry) return std::nullopt;
  std::string_view rest = entry->second;
  size_t colon = rest.find(':');
  if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
  NetDevice device;
  device.host = host;
  device.index = entry->first;
  device.name = std::string(rest.substr(0, colon));
  std::vector<std::string_view> parts = SplitOn(rest.substr(colon + 1), '/');
  device.port = ToSmallInt(parts[0]);
  if (!device.port) return std::nullopt;
  // NCCL 2.28 prints "UNSPECIFIED" for an unknown link layer; keep only the
  // two values the model knows and leave anything else unknown.
  if (parts.size() > 1 && (parts[1] == "IB" || parts[1] == "RoCE")) {
    device.link = std::string(parts[1]);
  }
  for (size_t i = 2; i < parts.size(); ++i) {
    if (parts[i] == "SHARP") device.sharp = true;
  }
  return device;
}

using DeviceKey = std::tuple<std::string, int, std::string, int>;

void TakeIbDevices(std::string_view list, int line, const std::string& host, NcclLogInfo* info,
                   std::set<DeviceKey>* seen, std::vector<ParseError>* errors) {
  // "... [RO]; OOB ib0:10.0.0.1<0>" (2.12+) or "... ; OOB ib0:..." (older).
  size_t oob = list.find("; OOB");
  bool complete = oob != std::string_view::npos;
  std::vector<std::string_view> tokens = SplitWords(complete ? list.substr(0, oob) : list);
  if (!tokens.empty() && tokens.back() == "[RO]") tokens.pop_back();
  if (!complete) {
    // Cut off before "; OOB": the last entry may be cut too ("/Ro", a missing
    // "/SHARP"), so only the entries before it are trusted.
    Report(errors, line, "truncated NET/IB device line: " + std::string(list));
    if (!tokens.empty()) tokens.pop_back();
    if (tokens.empty()) return;
  }
  if (tokens.empty()) {
    // NCCL found HCAs but none is usable (filtered by NCCL_IB_HCA, all ports
    // down): for the fabric this is the same as "No device found.".
    info->ib_no_device = true;
    return;
  }
  for (std::string_view token : tokens) {
    std::optional<NetDevice> device = ParseIbDevice(token, host);
    if (!device) {
      Report(errors, line, "malformed NET/IB device entry: " + std::string(token));
      continue;
    }
    DeviceKey key{device->host, device->index, device->name, device->port.value_or(-1)};
    if (seen->insert(key).second) info->net_devices.push_back(std::move(*device));
  }
}

// "NET/Socket : Using [0]ens3:172.31.12.210<0> [1]eth1:fe80::1%eth1<0>".
void TakeSocketInterfaces(std::string_view list, int line, NcclLogInfo* info,
                          std::vector<ParseError>* errors) {
  for (std::string_view token : SplitWords(list)) {
    auto entry = SplitIndexedEntry(token);
    size_t colon = entry ? entry->second.find(':') : std::string_view::npos;
    if (colon == 0 || colon == std::string_view::npos) {
      Report(errors, line, "truncated NET/Socket interface entry: " + std::string(token));
      continue;
    }
    AddDistinct(&info->socket_interfaces, entry->second.substr(0, colon));
  }
}

// "... GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" (2.7+, with " (no module)"
// before 2.19) and "... Disabled for GPU 0[0] / HCA 0 'mlx5_0' (no module or
// not supported by GPU)" (2.4). The distance-based "Disabled for GPU 1b000 /
// HCA 0 (distance 5 > 4)" names no HCA and only concerns one GPU/NIC pair, so
// it does not count.
void TakeGdrDisabled(std::string_view message, NcclLogInfo* info) {
  if (message.find("GPU Direct RDMA Disabled for") == std::string_view::npos) return;
  size_t open = message.find('\'');
  if (open == std::string_view::npos) return;
  size_t close = message.find('\'', open + 1);
  if (close == std::string_view::npos) return;
  AddDistinct(&info->gdr_disabled_hcas, message.substr(open + 1, close - open - 1));
}

// 2.28's "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'": the socket
// transport never has GDR, and NCCL 2.28 imports every network into its
// topology, so an IB job prints it too. Kept apart from the HCAs: it must not
// turn an IB run's GDR verdict to false.
void TakeSocketGdrDisabled(std::string_view message, NcclLogInfo* info) {
  size_t open = message.find('\'');
  if (open == std::string_view::npos) return;
  size_t close = message.find('\'', open + 1);
  if (close == std::string_view::npos) return;
  AddDistinct(&info->socket_gdr_disabled, message.substr(open + 1, close - open - 1));
}

// "[ncclCommInitRank ]comm 0x55cc8aa86c70 rank 0 nranks 16 cudaDev 0 ...".
std::optional<int> CommSize(std::string_view message) {
  std::vector<std::string_view> words = SplitWords(message);
  for (size_t i = 0; i + 5 < words.size(); ++i) {
    if (words[i] == "comm" && words[i + 2] == "rank" && words[i + 4] == "nranks") {
      return ToSmallInt(words[i + 5]);
    }
  }
  return std::nullopt;
}

// "3[4a000]" (peer with bus id or device), or "3" (2.4 NET and CollNet lines).
bool ParsePeer(std::string_view text, int* rank, std::string* bus_id) {
  text = Trim(text);
  std::string_view digits = LeadingDigits(text);
  std::optional<int> value = ToSmallInt(digits);
  if (!value) return false;
  std::string_view rest = text.substr(digits.size());
  if (!rest.empty()) {
    if (rest.front() != '[' || rest.back() != ']' || rest.size() < 3) return false;
    *bus_id = std::string(rest.substr(1, rest.size() - 2));
  }
  *rank = *value;
  return true;
}

// "0" or PXN's "1(0)" (NIC 1, reached through proxy rank 0).
bool IsNicIndexPart(std::string_view part) {
  std::string_view digits = LeadingDigits(part);
  if (digits.empty()) return false;
  std::string_view rest = part.substr(digits.size());
  return rest.empty() || (rest.size() >= 3 && rest.front() == '(' && rest.back() == ')' &&
                          ToInt(rest.substr(1, rest.size() - 2)));
}

// Fills family/nic_index/gdrdma from the text after "via ". Families are what
// `fabtrack parse` reports as transports, so flags that vary per connection
// (NIC index, /GDRDMA, /Shared, /read, /CE, SHM's direct|CE per side) are cut
// off; names with blanks ("AWS Libfabric", "direct pointer") stay whole.
bool ClassifyTransport(std::string_view detail, ChannelObservation* out) {
  std::vector<std::string_view> parts = SplitOn(detail, '/');
  std::string_view head = parts[0];
  if (head == "NET" || head == "COLLNET") {
    // The net name is what sits between the head and the first NIC index; a
    // plugin name might contain a '/', so do not assume it is one part.
    size_t k = 2;
    while (k < parts.size() && !IsNicIndexPart(parts[k])) ++k;
    if (k >= parts.size()) return false;
    std::string name(parts[1]);
    for (size_t i = 2; i < k; ++i) name += "/" + std::string(parts[i]);
    if (Trim(name).empty()) return false;
    out->family = std::string(head) + "/" + name;
    out->nic_index = ToSmallInt(LeadingDigits(parts[k]));
    for (size_t i = k + 1; i < parts.size(); ++i) {
      // "GDRDMA" or 2.28's "GDRDMA(PCI)".
      if (StartsWith(parts[i], "GDRDMA")) out->gdrdma = true;
    }
    return true;
  }
  if (head == "P2P") {
    // P2P/IPC, P2P/CUMEM, P2P/MNNVL, P2P/direct pointer, P2P/common device,
    // P2P/indirect/<rank>[<dev>].
    if (parts.size() == 1 || parts[1].empty()) {
      out->family = "P2P";
    } else {
      out->family = "P2P/" + std::string(parts[1]);
    }
    return true;
  }
  // "SHM/direct/direct", "SHM/CE/direct" (2.19+) and "direct shared memory"
  // (2.4 to 2.18) are the same transport.
  if (head == "SHM" || detail == "direct shared memory") {
    out->family = "SHM";
    return true;
  }
  if (Trim(head).empty()) return false;
  out->family = std::string(head);
  return true;
}

enum class ChannelLine {
  kNotChannel,  // some other message
  kTopology,    // ring order / prev->me->next listing, no connection
  kConnection,  // *out filled
  kTruncated,   // a connection line cut short
  kMalformed,   // a connection line that does not parse (e.g. two lines merged)
};

// Parses the message of an INFO line that may describe one connection:
//   "Ring 00 : 3[3] -> 2[2] via P2P/IPC"                       (2.4 to 2.6)
//   "Ring 00 : 3 -> 4 [send] via NET/IB/0/GDRDMA"              (2.4)
//   "Channel 00 : 3[4a000] -> 6[44000] [send] via NET/IB/0"    (2.7 to 2.11, SHM/p2p later)
//   "Channel 04/1 : 0[0] -> 1[1] via P2P/IPC/read"             (2.12+, connIndex 1)
//   "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA"       (one rank, no peer)
// and tells apart the listings that share the prefix: "Channel 00/02 :  0 1",
// 2.4's "Channel 00 :  0 1 2", 2.12+'s "Ring 00 : 7 -> 0 -> 1".
ChannelLine ParseChannelLine(std::string_view message, ChannelObservation* out) {
  std::string_view rest;
  bool is_ring = false;
  bool is_collnet = false;
  if (StartsWith(message, "Ring ")) {
    is_ring = true;
    rest = message.substr(5);
  } else if (StartsWith(message, "Channel ")) {
    rest = message.substr(8);
  } else if (StartsWith(message, "CollNet ")) {
    is_collnet = true;
    rest = message.substr(8);
  } else {
    return ChannelLine::kNotChannel;
  }
  std::string_view number = LeadingDigits(rest);
  // "CollNet [send] : rank ..." (TRACE) and other prose.
  if (number.empty()) return ChannelLine::kNotChannel;
  std::optional<int> channel = ToSmallInt(number);
  if (!channel) return ChannelLine::kMalformed;
  rest = rest.substr(number.size());
  std::optional<int> conn_index;
  if (StartsWith(rest, "/")) {
    std::string_view second = LeadingDigits(rest.substr(1));
    if (second.empty()) return rest.size() == 1 ? ChannelLine::kTruncated : ChannelLine::kMalformed;
    conn_index = ToSmallInt(second);
    rest = rest.substr(1 + second.size());
  }
  rest = TrimLeft(rest);
  if (rest.empty()) return ChannelLine::kTruncated;
  if (rest.front() != ':') return ChannelLine::kNotChannel;
  std::string_view body = Trim(rest.substr(1));

  size_t via = body.find(" via ");
  if (via == std::string_view::npos) {
    if (body == "via" || EndsWith(body, " via")) return ChannelLine::kTruncated;
    // Listings hold only rank numbers, arrows and tree "-1/-1/-1" parts.
    bool listing = std::all_of(body.begin(), body.end(), [](char c) {
      return IsDigit(c) || IsBlank(c) || c == '-' || c == '>' || c == '/';
    });
    return listing ? ChannelLine::kTopology : ChannelLine::kTruncated;
  }
  std::string_view left = Trim(body.substr(0, via));
  std::string_view detail = Trim(body.substr(via + 5));
  if (detail.empty()) return ChannelLine::kTruncated;
  // Two processes writing into one line leave a second header or connection
  // inside the transport text.
  if (detail.find(" via ") != std::string_view::npos ||
      detail.find("->") != std::string_view::npos ||
      detail.find("NCCL INFO") != std::string_view::npos ||
      detail.find("NCCL WARN") != std::string_view::npos) {
    return ChannelLine::kMalformed;
  }

  ChannelObservation obs;
  obs.channel = *channel;
  obs.conn_index = conn_index;
  obs.is_ring_line = is_ring;
  obs.detail = std::string(detail);
  for (std::string_view dir : {"send", "receive"}) {
    std::string suffix = "[" + std::string(dir) + "]";
    if (EndsWith(left, suffix)) {
      obs.direction = std::string(dir);
      left = Trim(left.substr(0, left.size() - suffix.size()));
      break;
    }
  }
  if (is_collnet) {
    // A CollNet connection joins the rank to the network collective, not to
    // one peer: both ends are the rank itself.
    if (!ParsePeer(left, &obs.from_rank, &obs.from_bus_id)) return ChannelLine::kMalformed;
    obs.to_rank = obs.from_rank;
    obs.to_bus_id = obs.from_bus_id;
  } else {
    size_t arrow = left.find("->");
    if (arrow == std::string_view::npos || left.find("->", arrow + 2) != std::string_view::npos ||
        !ParsePeer(left.substr(0, arrow), &obs.from_rank, &obs.from_bus_id) ||
        !ParsePeer(left.substr(arrow + 2), &obs.to_rank, &obs.to_bus_id)) {
      return ChannelLine::kMalformed;
    }
  }
  if (!ClassifyTransport(detail, &obs)) return ChannelLine::kTruncated;
  *out = std::move(obs);
  return ChannelLine::kConnection;
}

// Messages of INFO lines that name the network.
std::optional<std::string_view> NameBetween(std::string_view message, std::string_view prefix,
                                            std::string_view suffix) {
  if (!StartsWith(message, prefix)) return std::nullopt;
  std::string_view name = message.substr(prefix.size());
  if (!suffix.empty()) {
    if (!EndsWith(name, suffix)) return std::nullopt;
    name.remove_suffix(suffix.size());
  }
  name = Trim(name);
  if (name.empty()) return std::nullopt;
  return name;
}

}  // namespace

NcclLogInfo ParseNcclLog(const std::vector<CleanLine>& lines, std::vector<ParseError>* errors) {
  NcclLogInfo info;
  std::unordered_set<std::string> hosts_seen;
  std::set<DeviceKey> devices_seen;
  // 2.27+ plugin lines only stand in for "Using network" when it is missing.
  std::optional<std::string> assigned_plugin;
  std::optional<std::string> initialized_plugin;

  for (const CleanLine& clean : lines) {
    std::optional<NcclLogLine> line = SplitNcclLogLine(clean.text);
    if (!line) continue;
    ++info.info_lines;
    if (!line->host.empty() && hosts_seen.insert(line->host).second) {
      info.hosts.push_back(line->host);
    }
    const std::string& message = line->message;
    if (line->level == "VERSION") {
      TakeVersion(message, &info);
      continue;
    }
    if (line->level == "WARN") {
      info.warnings.push_back(LogMessage{line->host, line->level, message, clean.number});
      continue;
    }
    // TRACE repeats connections from the receiving side ("<-"); the INFO lines
    // already have each one.
    if (line->level != "INFO") continue;

    if (StartsWith(message, "NCCL version ")) {
      TakeVersion(message, &info);
    } else if (auto name = NameBetween(message, "Using network ", "")) {
      if (!info.network) info.network = std::string(*name);
      AddDistinct(&info.networks, *name);
    } else if (auto name = NameBetween(message, "Assigned NET plugin ", " to comm")) {
      if (!assigned_plugin) assigned_plugin = std::string(*name);
      AddDistinct(&info.networks, *name);
    } else if (auto name = NameBetween(message, "Initialized NET plugin ", "")) {
      if (!initialized_plugin) initialized_plugin = std::string(*name);
    } else if (auto ib = AfterNetColon(message, "NET/IB")) {
      if (StartsWith(*ib, "No device found")) {
        info.ib_no_device = true;
      } else if (StartsWith(*ib, "Using")) {
        TakeIbDevices(ib->substr(5), clean.number, line->host, &info, &devices_seen, errors);
      } else {
        TakeGdrDisabled(message, &info);
      }
    } else if (auto socket = AfterNetColon(message, "NET/Socket")) {
      // "NET/Socket: Using 2 threads and 8 sockets per thread" lists no
      // interface; only the bracketed list does.
      if (StartsWith(*socket, "Using") && socket->find('[') != std::string_view::npos) {
        TakeSocketInterfaces(socket->substr(5), clean.number, &info, errors);
      } else if (socket->find("GPU Direct RDMA Disabled for") != std::string_view::npos) {
        TakeSocketGdrDisabled(*socket, &info);
      }
    } else if (message.find("GPU Direct RDMA Disabled for") != std::string::npos) {
      // Plugins print it under their own prefix ("NET/IBext_v8 : ...").
      TakeGdrDisabled(message, &info);
    } else if (std::optional<int> size = CommSize(message)) {
      // Split and sub-communicators are smaller than the job; the largest one
      // seen is the job size.
      if (!info.nranks || *size > *info.nranks) info.nranks = size;
    } else {
      ChannelObservation obs;
      switch (ParseChannelLine(message, &obs)) {
        case ChannelLine::kConnection:
          obs.host = line->host;
          obs.pid = line->pid;
          obs.cuda_device = line->cuda_device;
          obs.line = clean.number;
          info.channels.push_back(std::move(obs));
          break;
        case ChannelLine::kTruncated:
          Report(errors, clean.number, "truncated channel line: " + message);
          break;
        case ChannelLine::kMalformed:
          Report(errors, clean.number, "malformed channel line: " + message);
          break;
        case ChannelLine::kNotChannel:
        case ChannelLine::kTopology:
          break;
      }
    }
  }
  if (!info.network) info.network = assigned_plugin ? assigned_plugin : initialized_plugin;
  if (info.networks.empty() && info.network) info.networks.push_back(*info.network);
  return info;
}

}  // namespace fabtrack

namespace fabtrack {
namespace {

template <typename T>
void AppendDistinct(std::vector<T>* into, const std::vector<T>& from) {
  for (const T& item : from) {
    if (std::find(into->begin(), into->end(), item) == into->end()) into->push_back(item);
  }
}

bool SameDevice(const NetDevice& a, const NetDevice& b) {
  return a.host == b.host && a.index == b.index && a.name == b.name && a.port == b.port;
}

}  // namespace

void MergeNcclLog(NcclLogInfo* into, const NcclLogInfo& from) {
  if (!into->nccl_version) into->nccl_version = from.nccl_version;
  if (!into->cuda_version) into->cuda_version = from.cuda_version;
  if (!into->network) into->network = from.network;
  AppendDistinct(&into->networks, from.networks);
  for (const NetDevice& d : from.net_devices) {
    bool seen = std::any_of(into->net_devices.begin(), into->net_devices.end(),
                            [&](const NetDevice& x) { return SameDevice(x, d); });
    if (!seen) into->net_devices.push_back(d);
  }
  // Channel lines of different ranks are different observations: keep all.
  into->channels.insert(into->channels.end(), from.channels.begin(), from.channels.end());
  AppendDistinct(&into->hosts, from.hosts);
  AppendDistinct(&into->gdr_disabled_hcas, from.gdr_disabled_hcas);
  AppendDistinct(&into->socket_interfaces, from.socket_interfaces);
  AppendDistinct(&into->socket_gdr_disabled, from.socket_gdr_disabled);
  into->ib_no_device = into->ib_no_device || from.ib_no_device;
  if (from.nranks && (!into->nranks || *from.nranks > *into->nranks)) into->nranks = from.nranks;
  into->warnings.insert(into->warnings.end(), from.warnings.begin(), from.warnings.end());
  into->info_lines += from.info_lines;
}

}  // namespace fabtrack
