#include "collector/parse/nccl_log_parser.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <unordered_set>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collector/parse/nccl_log_line.h"
#include "collector/parse/nccl_vocabulary.h"

namespace fabtrack {
namespace {

// What one file's log keeps at most of what repeats (see NcclLogParser).
constexpr size_t kMaxKeptMessages = 1000;
constexpr size_t kMaxKeptChannels = 20000;
constexpr size_t kMaxKeptCommRanks = 20000;
// How many lines may follow the first one before the parser decides whether
// that line was cut from the front.
constexpr size_t kLookAheadLines = 4096;
constexpr size_t kLookAheadBytes = 1 << 20;

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsBlank(char c) { return c == ' ' || c == '\t'; }

// Every INFO message meets a dozen of these; most differ at the first
// character, so that is compared before the call to memcmp.
bool StartsWith(std::string_view s, std::string_view prefix) {
  if (prefix.empty()) return true;
  return s.size() >= prefix.size() && s[0] == prefix[0] &&
         std::memcmp(s.data(), prefix.data(), prefix.size()) == 0;
}

// Whether `needle` occurs in `s`, for the searches every message makes:
// memchr for one of the needle's rarer characters (needle[anchor]), then a
// compare. std::string_view::find would stop at every blank for a needle
// starting with ' ', and memmem sets up a shift table on every call: on a
// message of a hundred bytes this is several times cheaper than either.
bool ContainsAt(std::string_view s, std::string_view needle, size_t anchor) {
  if (s.size() < needle.size()) return false;
  const char* p = s.data() + anchor;
  // One past the last place the anchor can be with the whole needle inside s.
  const char* const end = s.data() + (s.size() - needle.size()) + anchor + 1;
  while (p < end) {
    p = static_cast<const char*>(std::memchr(p, needle[anchor], static_cast<size_t>(end - p)));
    if (p == nullptr) return false;
    if (std::memcmp(p - anchor, needle.data(), needle.size()) == 0) return true;
    ++p;
  }
  return false;
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

// Into a vector the caller reuses (a thread_local of its own): the words of
// every log line are split, and a fresh vector costs an allocation per growth.
void SplitWordsInto(std::string_view s, std::vector<std::string_view>* words) {
  words->clear();
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && IsBlank(s[i])) ++i;
    size_t start = i;
    while (i < s.size() && !IsBlank(s[i])) ++i;
    if (i > start) words->push_back(s.substr(start, i - start));
  }
}

void SplitOnInto(std::string_view s, char sep, std::vector<std::string_view>* parts) {
  parts->clear();
  size_t start = 0;
  while (true) {
    size_t pos = s.find(sep, start);
    if (pos == std::string_view::npos) {
      parts->push_back(s.substr(start));
      return;
    }
    parts->push_back(s.substr(start, pos - start));
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
void TakeVersion(std::string_view message, int line, NcclLogInfo* info,
                 std::vector<ParseError>* errors) {
  constexpr std::string_view kPrefix = "NCCL version ";
  if (!StartsWith(message, kPrefix) || info->nccl_version) return;
  thread_local std::vector<std::string_view> words;
  SplitWordsInto(message.substr(kPrefix.size()), &words);
  // "NCCL version mismatch ..." and similar prose is not a version.
  if (words.empty() || !IsDigit(words[0].front())) return;
  std::string_view token = words[0];
  size_t plus = token.find('+');
  std::string_view version = token.substr(0, plus);
  std::optional<std::string_view> cuda;
  if (plus != std::string_view::npos) {
    std::string_view build = token.substr(plus + 1);
    if (StartsWith(build, "cuda")) cuda = build.substr(4);
  }
  if (!IsDottedVersion(version) || (cuda && !IsDottedVersion(*cuda))) {
    Report(errors, line, "unknown NCCL version: " + std::string(token));
    return;
  }
  info->nccl_version = std::string(version);
  if (cuda) info->cuda_version = std::string(*cuda);
}

// "NCCL_IB_HCA set by environment to mlx5_0" (string settings) and
// "NCCL_IB_TIMEOUT set by environment to 22." (numeric ones, with a period).
void TakeEnvSetting(std::string_view message, NcclLogInfo* info) {
  constexpr std::string_view kSet = " set by environment to ";
  size_t at = message.find(kSet);
  if (at == std::string_view::npos) return;
  std::string_view name = message.substr(0, at);
  if (!StartsWith(name, "NCCL_") || !std::all_of(name.begin(), name.end(), [](char c) {
        return std::isupper(static_cast<unsigned char>(c)) || IsDigit(c) || c == '_';
      })) {
    return;
  }
  std::string_view value = Trim(message.substr(at + kSet.size()));
  if (EndsWith(value, ".")) {
    std::string_view number = value.substr(0, value.size() - 1);
    if (StartsWith(number, "-")) number.remove_prefix(1);
    if (!number.empty() && std::all_of(number.begin(), number.end(), IsDigit)) {
      value.remove_suffix(1);
    }
  }
  info->env_settings.emplace(std::string(name), std::string(value));
}

// "cudaDriverVersion 12020": the CUDA version the driver supports, written
// as the harness writes cudaDriverGetVersion ("12.2").
void TakeDriverVersion(std::string_view message, NcclLogInfo* info) {
  thread_local std::vector<std::string_view> words;
  SplitWordsInto(message, &words);
  if (words.size() != 2 || words[0] != "cudaDriverVersion" || info->cuda_driver_version) return;
  std::optional<int64_t> code = ToInt(words[1]);
  if (!code || *code < 1000 || *code > 999999) return;
  info->cuda_driver_version =
      std::to_string(*code / 1000) + "." + std::to_string((*code % 1000) / 10);
}

// "NET/Plugin: Loaded net plugin NCCL RDMA Plugin v8 (v8)", "Loaded net
// plugin AWS Libfabric (v6)" name the external plugin; "No plugin found" and
// 2.27+'s "Could not find: libnccl-net.so" mean NCCL's internal IB/Socket.
void TakeNetPlugin(std::string_view rest, NcclLogInfo* info) {
  constexpr std::string_view kLoaded = "Loaded net plugin ";
  size_t at = rest.find(kLoaded);
  if (at != std::string_view::npos) {
    std::string_view name = Trim(rest.substr(at + kLoaded.size()));
    if (EndsWith(name, ")")) {
      size_t open = name.rfind(" (");
      if (open != std::string_view::npos) name = Trim(name.substr(0, open));
    }
    if (!name.empty() && (!info->net_plugin || *info->net_plugin == "internal")) {
      info->net_plugin = std::string(name);
    }
    return;
  }
  if ((rest.find("No plugin found") != std::string_view::npos ||
       StartsWith(rest, "Could not find: libnccl-net")) &&
      !info->net_plugin) {
    info->net_plugin = "internal";
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
std::optional<NetDevice> ParseIbDevice(std::string_view token, std::string_view host) {
  auto entry = SplitIndexedEntry(token);
  if (!entry) return std::nullopt;
  std::string_view rest = entry->second;
  size_t colon = rest.find(':');
  if (colon == 0 || colon == std::string_view::npos) return std::nullopt;
  NetDevice device;
  device.host = host;
  device.index = entry->first;
  device.name = std::string(rest.substr(0, colon));
  thread_local std::vector<std::string_view> parts;
  SplitOnInto(rest.substr(colon + 1), '/', &parts);
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

void TakeIbDevices(std::string_view list, int line, std::string_view host, NcclLogInfo* info,
                   std::set<DeviceKey>* seen, std::vector<ParseError>* errors) {
  // "... [RO]; OOB ib0:10.0.0.1<0>" (2.12+) or "... ; OOB ib0:..." (older).
  size_t oob = list.find("; OOB");
  bool complete = oob != std::string_view::npos;
  thread_local std::vector<std::string_view> tokens;
  SplitWordsInto(complete ? list.substr(0, oob) : list, &tokens);
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
  thread_local std::vector<std::string_view> tokens;
  SplitWordsInto(list, &tokens);
  for (std::string_view token : tokens) {
    auto entry = SplitIndexedEntry(token);
    size_t colon = entry ? entry->second.find(':') : std::string_view::npos;
    if (colon == 0 || colon == std::string_view::npos) {
      Report(errors, line, "truncated NET/Socket interface entry: " + std::string(token));
      continue;
    }
    AddDistinct(&info->socket_interfaces, entry->second.substr(0, colon));
  }
}

// Asked of every INFO message, twice: anchored on its rare 'b'.
bool HasGdrDisabled(std::string_view message) {
  return ContainsAt(message, "GPU Direct RDMA Disabled for", 20);
}

// "... GPU Direct RDMA Disabled for HCA 0 'mlx5_0'" (2.7+, with " (no module)"
// before 2.19) and "... Disabled for GPU 0[0] / HCA 0 'mlx5_0' (no module or
// not supported by GPU)" (2.4). The distance-based "Disabled for GPU 1b000 /
// HCA 0 (distance 5 > 4)" names no HCA and only concerns one GPU/NIC pair, so
// it does not count.
// The name between the first pair of single quotes ("... HCA 0 'mlx5_0'").
std::optional<std::string_view> QuotedName(std::string_view message) {
  size_t open = message.find('\'');
  if (open == std::string_view::npos) return std::nullopt;
  size_t close = message.find('\'', open + 1);
  if (close == std::string_view::npos) return std::nullopt;
  return message.substr(open + 1, close - open - 1);
}

void TakeGdrDisabled(std::string_view message, NcclLogInfo* info) {
  if (message.find("GPU Direct RDMA Disabled for") == std::string_view::npos) return;
  if (auto name = QuotedName(message)) AddDistinct(&info->gdr_disabled_hcas, *name);
}

// 2.28's "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'": the socket
// transport never has GDR, and NCCL 2.28 imports every network into its
// topology, so an IB job prints it too. Kept apart from the HCAs: it must not
// turn an IB run's GDR verdict to false.
void TakeSocketGdrDisabled(std::string_view message, NcclLogInfo* info) {
  if (auto name = QuotedName(message)) AddDistinct(&info->socket_gdr_disabled, *name);
}

struct CommLine {
  int rank = 0;
  int nranks = 0;
  std::optional<int> nnodes, local_ranks;
};

// "[ncclCommInitRankConfig ]comm 0x55cc8aa86c70 rank 0 nranks 16 cudaDev 0
// ... - Init START|COMPLETE" (and "Destroy COMPLETE"), and 2.19+'s "comm
// 0x8ec0ac0 rank 6 nRanks 16 nNodes 2 localRanks 8 localRank 6 MNNVL 0".
std::optional<CommLine> ParseCommLine(std::string_view message) {
  // Most messages that reach here are channel lines: without the word
  // "comm" there is nothing to split.
  const size_t comm = message.find("comm");
  if (comm == std::string_view::npos) return std::nullopt;
  // No word before the one holding the first "comm" can be "comm": split from
  // that word on.
  size_t from = comm;
  while (from > 0 && !IsBlank(message[from - 1])) --from;
  thread_local std::vector<std::string_view> words;
  SplitWordsInto(message.substr(from), &words);
  for (size_t i = 0; i + 5 < words.size(); ++i) {
    if (words[i] != "comm" || words[i + 2] != "rank" ||
        (words[i + 4] != "nranks" && words[i + 4] != "nRanks")) {
      continue;
    }
    std::optional<int> rank = ToSmallInt(words[i + 3]);
    std::optional<int> nranks = ToSmallInt(words[i + 5]);
    if (!rank || !nranks || *nranks < 1 || *rank >= *nranks) return std::nullopt;
    CommLine comm{*rank, *nranks, std::nullopt, std::nullopt};
    for (size_t j = i + 6; j + 1 < words.size(); j += 2) {
      if (words[j] == "nNodes") comm.nnodes = ToSmallInt(words[j + 1]);
      if (words[j] == "localRanks") comm.local_ranks = ToSmallInt(words[j + 1]);
    }
    // A node count outside 1..nranks is a cut or garbled line.
    if (comm.nnodes && (*comm.nnodes < 1 || *comm.nnodes > *nranks)) comm.nnodes.reset();
    if (comm.local_ranks && (*comm.local_ranks < 1 || *comm.local_ranks > *nranks)) {
      comm.local_ranks.reset();
    }
    return comm;
  }
  return std::nullopt;
}

// Split and sub-communicators are smaller than the job; the largest one seen
// is the job, and its shape is the job's.
// `seen` holds the (rank, nranks, host) already named, as text; `key` is a
// buffer reused for the look-up.
void TakeComm(const CommLine& comm, std::string_view host, int line, NcclLogInfo* info,
              std::unordered_set<std::string>* seen, std::string* key) {
  bool larger = !info->nranks || comm.nranks > *info->nranks;
  if (larger) {
    info->nranks = comm.nranks;
    info->nnodes.reset();
    info->local_ranks.reset();
  }
  if (comm.nranks == *info->nranks) {
    if (comm.nnodes && (!info->nnodes || *comm.nnodes > *info->nnodes)) info->nnodes = comm.nnodes;
    if (comm.local_ranks && (!info->local_ranks || *comm.local_ranks > *info->local_ranks)) {
      info->local_ranks = comm.local_ranks;
    }
  }
  // Init and destroy lines name the same ranks night after night; past the
  // cap only a rank not named yet is kept (the node count reads rank/host).
  key->assign(std::to_string(comm.rank));
  key->push_back('/');
  key->append(std::to_string(comm.nranks));
  key->push_back('/');
  key->append(host);
  bool new_rank = !seen->count(*key);
  if (new_rank) seen->insert(*key);
  if (info->comm_ranks.size() < kMaxKeptCommRanks || new_rank) {
    info->comm_ranks.push_back(CommRank{comm.rank, comm.nranks, std::string(host), line});
  } else {
    ++info->dropped_comm_ranks;
  }
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
enum class Transport {
  kKnown,      // family filled
  kTruncated,  // a known beginning, cut short
  kUnknown,    // a word outside NCCL's vocabulary (a cut word, a new plugin)
};

// "3[0]" of "P2P/indirect/3[0]": the intermediate rank and its device.
bool IsIndirectPeer(std::string_view part) {
  std::string_view digits = LeadingDigits(part);
  std::string_view rest = part.substr(digits.size());
  return !digits.empty() && rest.size() >= 3 && rest.front() == '[' && rest.back() == ']';
}

// Fills family/nic_index/gdrdma from the text after "via ". Every word is
// checked against NCCL's vocabulary (collector/parse/nccl_vocabulary.h): a
// truncated "P2" or "NET/IB/0/GDR" is never stored as a transport.
Transport ClassifyTransport(std::string_view detail, ChannelObservation* out,
                            std::string* unknown) {
  thread_local std::vector<std::string_view> parts;
  SplitOnInto(detail, '/', &parts);
  std::string_view head = parts[0];
  if (head == "NET" || head == "COLLNET") {
    // The net name is what sits between the head and the first NIC index; a
    // plugin name might contain a '/', so do not assume it is one part.
    size_t k = 2;
    while (k < parts.size() && !IsNicIndexPart(parts[k])) ++k;
    std::string name(parts.size() > 1 ? parts[1] : "");
    for (size_t i = 2; i < k && i < parts.size(); ++i) name += "/" + std::string(parts[i]);
    // No NIC index: the line ends inside the name ("NET/AWS Lib").
    if (k >= parts.size() || name.empty()) return Transport::kTruncated;
    if (head == "NET" ? !IsKnownNetName(name) : !IsKnownCollNetName(name)) {
      *unknown = std::string(head) + "/" + name;
      return Transport::kUnknown;
    }
    out->family = std::string(head) + "/" + name;
    out->nic_index = ToSmallInt(LeadingDigits(parts[k]));
    for (size_t i = k + 1; i < parts.size(); ++i) {
      if (!IsKnownNetFlag(parts[i])) {
        *unknown = std::string(parts[i]);
        return Transport::kUnknown;
      }
      // "GDRDMA" or 2.28's "GDRDMA(PCI)".
      if (StartsWith(parts[i], "GDRDMA")) out->gdrdma = true;
    }
    return Transport::kKnown;
  }
  if (head == "P2P") {
    // P2P/IPC, P2P/CUMEM, P2P/MNNVL, P2P/direct pointer, P2P/common device,
    // each with /read or /CE; P2P/indirect/<rank>[<dev>].
    if (parts.size() == 1) return Transport::kTruncated;
    if (!IsKnownP2pKind(parts[1])) {
      *unknown = "P2P/" + std::string(parts[1]);
      return Transport::kUnknown;
    }
    for (size_t i = 2; i < parts.size(); ++i) {
      bool peer = parts[1] == "indirect" && i == 2 && IsIndirectPeer(parts[i]);
      if (!peer && !IsKnownP2pFlag(parts[i])) {
        *unknown = std::string(parts[i]);
        return Transport::kUnknown;
      }
    }
    out->family = "P2P/" + std::string(parts[1]);
    return Transport::kKnown;
  }
  // "SHM/direct/direct", "SHM/CE/direct" (2.19+) and "direct shared memory"
  // (2.4 to 2.18) are the same transport.
  if (detail == "direct shared memory") {
    out->family = "SHM";
    return Transport::kKnown;
  }
  if (head == "SHM") {
    // One mode per side: fewer is a cut line.
    if (parts.size() < 3) return Transport::kTruncated;
    for (size_t i = 1; i < parts.size(); ++i) {
      if (!IsKnownShmMode(parts[i]) || parts.size() > 3) {
        *unknown = std::string(detail);
        return Transport::kUnknown;
      }
    }
    out->family = "SHM";
    return Transport::kKnown;
  }
  if (Trim(head).empty()) return Transport::kTruncated;
  *unknown = std::string(head);
  return Transport::kUnknown;
}

enum class ChannelLine {
  kNotChannel,  // some other message
  kTopology,    // ring order / prev->me->next listing, no connection
  kConnection,  // *out filled
  kTruncated,   // a connection line cut short
  kMalformed,   // a connection line that does not parse (e.g. two lines merged)
  kUnknown,     // a transport word outside NCCL's vocabulary
};

// Parses the message of an INFO line that may describe one connection:
//   "Ring 00 : 3[3] -> 2[2] via P2P/IPC"                       (2.4 to 2.6)
//   "Ring 00 : 3 -> 4 [send] via NET/IB/0/GDRDMA"              (2.4)
//   "Channel 00 : 3[4a000] -> 6[44000] [send] via NET/IB/0"    (2.7 to 2.11, SHM/p2p later)
//   "Channel 04/1 : 0[0] -> 1[1] via P2P/IPC/read"             (2.12+, connIndex 1)
//   "CollNet 00/0 : 3 [send] via COLLNET/SHARP/0/GDRDMA"       (one rank, no peer)
// and tells apart the listings that share the prefix: "Channel 00/02 :  0 1",
// 2.4's "Channel 00 :  0 1 2", 2.12+'s "Ring 00 : 7 -> 0 -> 1".
// `*out` is a fresh observation; only a kConnection result means anything in it.
// The first words ParseChannelLine reads; any other message is kNotChannel.
bool MayBeChannelLine(std::string_view message) {
  return StartsWith(message, "Channel ") || StartsWith(message, "Ring ") ||
         StartsWith(message, "CollNet ");
}

ChannelLine ParseChannelLine(std::string_view message, ChannelObservation* out,
                             std::string* unknown) {
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

  size_t via = ContainsAt(body, " via ", 1) ? body.find(" via ") : std::string_view::npos;
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

  // Filled in place: every connection line of a month of logs passes here.
  ChannelObservation& obs = *out;
  obs.channel = *channel;
  obs.conn_index = conn_index;
  obs.is_ring_line = is_ring;
  obs.detail = std::string(detail);
  constexpr std::string_view kDirections[][2] = {{"send", "[send]"}, {"receive", "[receive]"}};
  for (const auto& [dir, suffix] : kDirections) {
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
  switch (ClassifyTransport(detail, &obs, unknown)) {
    case Transport::kTruncated:
      return ChannelLine::kTruncated;
    case Transport::kUnknown:
      return ChannelLine::kUnknown;
    case Transport::kKnown:
      break;
  }
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

// The first line of an excerpt may start mid-line: "n12:4242:4242 [0] ..."
// cut from "gpu-n12:...". Such a host is a proper suffix of a host of the
// other lines and appears on no other line.
bool CutFromTheFront(const std::string& host,
                     const std::unordered_map<std::string, int>& host_lines) {
  if (host.empty() || host_lines.at(host) > 1) return false;
  for (const auto& [other, count] : host_lines) {
    if (other.size() > host.size() && EndsWith(other, host)) return true;
  }
  return false;
}

// Whether the text of an unterminated last line would have yielded a fact:
// an NCCL line cut short, never half-read.
bool CutAtTheEnd(const CleanLine& clean, const NcclLogLineView* line) {
  return clean.unterminated && line != nullptr;
}

// Network names are checked against NCCL's vocabulary: a cut "IBex" or a
// plugin fabtrack does not know is reported, never stored.
std::optional<std::string_view> KnownNetwork(std::optional<std::string_view> name, int line,
                                             std::vector<ParseError>* errors) {
  if (!name) return std::nullopt;
  if (IsKnownNetName(*name)) return name;
  Report(errors, line, "unknown network name: " + std::string(*name));
  return std::nullopt;
}

// The INFO lines the analyzer's rdma_absent and gdrdma_disabled read
// (analyzer/log_events.cc gives their meaning; this only keeps them).
// `gdr_disabled` is HasGdrDisabled(m), which the caller needs as well.
bool SaysWhatNcclCouldNotUse(std::string_view m, bool gdr_disabled) {
  if (ContainsAt(m, "No device found", 10)) return true;  // anchored on the "f"
  if (ContainsAt(m, "Failed to open libibverbs", 0)) return true;
  if (StartsWith(m, "NET/Plugin") && (m.find("returned") != std::string_view::npos ||
                                      m.find("Could not find") != std::string_view::npos ||
                                      m.find("Failed") != std::string_view::npos)) {
    return true;
  }
  // The socket transport never has GDR: its line is not a loss.
  return gdr_disabled && !StartsWith(m, "NET/Socket");
}

// nccl-tests' "HOST: Test NCCL failure common.cu:1005 'unhandled system
// error ...'" (older ones "HOST:PID Test ..."; also "Test CUDA failure",
// "NCCL error in:"): not an NCCL log line, but the run failed. The host is kept
// only when the text before it is that one token.
// Whether `s` holds "ailure" or "NCCL error" (the words of every test
// failure form). Every line that is not NCCL's passes here, and the prose
// around tables (launcher warnings, the command line, device lines) is full of
// the single letters a memchr would stop at ('r', 'N'): instead, 16 places at
// a time, each needle's first and last byte are compared at once, and only
// places where both match are compared whole.
bool HasFailureWords(std::string_view s) {
  constexpr std::string_view kFailure = "ailure", kError = "NCCL error";
#if defined(__SSE2__)
  // Candidates starting at data[i, i + 16): bytes up to i + 15 + 9 + 1 read.
  constexpr size_t kReach = 16 + 9;
  auto scan = [&](const char* data, size_t places, size_t readable) {
    const __m128i a = _mm_set1_epi8('a'), e = _mm_set1_epi8('e'), n = _mm_set1_epi8('N'),
                  r = _mm_set1_epi8('r');
    for (size_t i = 0; i < places; i += 16) {
      const __m128i at0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i));
      const __m128i at5 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i + 5));
      const __m128i at9 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(data + i + 9));
      uint32_t failure = static_cast<uint32_t>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at0, a), _mm_cmpeq_epi8(at5, e))));
      uint32_t error = static_cast<uint32_t>(
          _mm_movemask_epi8(_mm_and_si128(_mm_cmpeq_epi8(at0, n), _mm_cmpeq_epi8(at9, r))));
      for (; failure != 0; failure &= failure - 1) {
        const size_t at = i + static_cast<size_t>(__builtin_ctz(failure));
        if (at + kFailure.size() <= readable &&
            std::memcmp(data + at, kFailure.data(), kFailure.size()) == 0) {
          return true;
        }
      }
      for (; error != 0; error &= error - 1) {
        const size_t at = i + static_cast<size_t>(__builtin_ctz(error));
        if (at + kError.size() <= readable &&
            std::memcmp(data + at, kError.data(), kError.size()) == 0) {
          return true;
        }
      }
    }
    return false;
  };
  // Whole blocks in place while their loads stay inside the text ...
  size_t done = 0;
  if (s.size() >= kReach) {
    done = (s.size() - kReach) / 16 * 16 + 16;
    if (scan(s.data(), done, s.size())) return true;
  }
  // ... and the last places (fewer than kReach) from a zero-padded copy: a
  // needle holds no NUL, so a match there is a match in the text.
  const size_t rest = s.size() - done;
  if (rest == 0) return false;
  char tail[2 * kReach + 16] = {};
  std::memcpy(tail, s.data() + done, rest);
  return scan(tail, rest, rest);
#else
  return s.find(kFailure) != std::string_view::npos || s.find(kError) != std::string_view::npos;
#endif
}

std::optional<LogMessage> TestFailureLine(const CleanLine& clean) {
  const std::string& text = clean.text;
  // Every other line of a long output passes here: all four forms have
  // "failure" or "NCCL error".
  const std::string_view view(text);
  if (!HasFailureWords(view)) return std::nullopt;
  size_t at = text.find("Test NCCL failure");
  if (at == std::string::npos) at = text.find("Test CUDA failure");
  // PyTorch's "DistBackendError: NCCL error in: FILE:LINE, ..." and the
  // bare "NCCL error: ..." of other launchers; prose that merely mentions an
  // NCCL error is not a failure.
  if (at == std::string::npos) at = text.find(" NCCL error in:");
  if (at == std::string::npos) at = text.find(" NCCL error:");
  if (at == std::string::npos) return std::nullopt;
  LogMessage m{"", "TEST", text.substr(at + (text[at] == ' ' ? 1 : 0)), clean.number};
  std::string_view before = std::string_view(text).substr(0, at);
  while (!before.empty() && before.back() == ' ') before.remove_suffix(1);
  if (!before.empty() && before.back() == ':') before.remove_suffix(1);  // "HOST: Test"
  if (size_t colon = before.rfind(':'); colon != std::string_view::npos) {
    std::string_view pid = before.substr(colon + 1);  // "HOST:PID Test"
    if (!pid.empty() &&
        std::all_of(pid.begin(), pid.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      before = before.substr(0, colon);
    }
  }
  if (!before.empty() && before.find_first_of(" \t[]<>:#") == std::string_view::npos) {
    m.host = before;
  }
  return m;
}

// A line NCCL prints, as it reads without its "host:pid:tid [dev] NCCL INFO"
// prefix: what a log with every prefix stripped (by a log shipper, or by hand
// before posting) still says. Only messages whose whole text has a grammar of
// NCCL's own are taken, so prose that mentions a network is not one: a
// connection line ("Channel 00/0 : 0[0] -> 1[1] via NET/IB/0"), "Using
// network IB", the NET/IB and NET/Socket device lists, the NET/Plugin lines,
// an init line ("comm 0x... rank 0 nranks 2 ...", "ncclCommInitRank comm
// 0x..."), an echoed NCCL_* setting
// and cudaDriverVersion.
bool IsBareNcclMessage(std::string_view text) {
  switch (text.front()) {
    case 'C':
    case 'R': {
      ChannelObservation obs;
      std::string unknown;
      return ParseChannelLine(text, &obs, &unknown) == ChannelLine::kConnection;
    }
    case 'U': {
      std::optional<std::string_view> name = NameBetween(text, "Using network ", "");
      return name && IsKnownNetName(*name);
    }
    case 'N': {
      if (auto ib = AfterNetColon(text, "NET/IB")) {
        return StartsWith(*ib, "Using [") || StartsWith(*ib, "No device found");
      }
      if (auto socket = AfterNetColon(text, "NET/Socket")) return StartsWith(*socket, "Using [");
      if (auto plugin = AfterNetColon(text, "NET/Plugin")) {
        return plugin->find("libnccl-net") != std::string_view::npos ||
               plugin->find("net plugin") != std::string_view::npos;
      }
      if (!StartsWith(text, "NCCL_")) return false;
      size_t at = text.find(" set by environment to ");
      return at != std::string_view::npos &&
             std::all_of(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), [](char c) {
               return std::isupper(static_cast<unsigned char>(c)) || IsDigit(c) || c == '_';
             });
    }
    case 'n':  // "ncclCommInitRank comm 0x... rank 0 nranks 2 ... - Init START"
      if (!StartsWith(text, "ncclComm") || text.find(" comm 0x") == std::string_view::npos) {
        return false;
      }
      return ParseCommLine(text).has_value();
    case 'c': {
      if (StartsWith(text, "comm 0x")) return ParseCommLine(text).has_value();
      thread_local std::vector<std::string_view> words;
      SplitWordsInto(text, &words);
      return words.size() == 2 && words[0] == "cudaDriverVersion" && ToInt(words[1]).has_value();
    }
    default:
      return false;
  }
}

// Whether the host of `line`, a view into `text`, comes glued to a time: the
// character before it ends an RFC 3339 zone ("...-07:00gpu-01:80:2500",
// "...Zgpu-01:..."), where NCCL's own prefix has nothing, a blank or a
// launcher tag's ':' (nccl_log_line.cc reads such a host only after a zone).
bool GluedToTime(const NcclLogLineView& line, std::string_view text) {
  if (line.host.empty() || line.host.data() <= text.data() ||
      line.host.data() >= text.data() + text.size()) {
    return false;
  }
  const char before = line.host.data()[-1];
  return IsDigit(before) || before == 'Z';
}

// A log console's copy (CloudWatch) lists an event as "  | <time> | <line>"
// and, when the event is expanded, again with the time glued to the line
// ("<time><line>", GluedToTime). The text both forms share:
// without the leading bars and blanks, and without the bar between time and
// line. Empty for a line of neither form.
std::string_view ConsoleKey(std::string_view text, bool glued, std::string* buffer) {
  size_t start = 0;
  while (start < text.size() && (IsBlank(text[start]) || text[start] == '|')) ++start;
  if (glued) return text.substr(start);
  if (start == 0 || text.find('|') >= start) return {};
  std::string_view rest = text.substr(start);
  size_t end = 0;
  while (end < rest.size() && !IsBlank(rest[end]) && rest[end] != '|') ++end;
  size_t line = end;
  while (line < rest.size() && (IsBlank(rest[line]) || rest[line] == '|')) ++line;
  buffer->assign(rest.substr(0, end));
  buffer->append(rest.substr(line));
  return *buffer;
}

}  // namespace

// The per-file state of the log parser. Everything it keeps is either a
// distinct value (hosts, devices, settings) or capped with a count of what was
// left out, so a month of nightly logs in one file costs what one night does.
class NcclLogParser::Impl {
 public:
  explicit Impl(std::vector<ParseError>* errors, bool bare = false)
      : errors_(errors), bare_mode_(bare) {}

  // `line` views `clean.text` (or is null: not an NCCL line); both are only
  // valid during the call, so a held line is copied.
  void Feed(const CleanLine& clean, const NcclLogLineView* line) {
    ++fed_;
    if (fed_ == 1 && line && !line->host.empty()) {
      // Whether the first line was cut from the front depends on the hosts of
      // the lines after it: hold it (and them) until its host shows up again,
      // or a bounded look-ahead has passed.
      holding_ = true;
      ++host_lines_[std::string(line->host)];
      Hold(clean, line);
      return;
    }
    if (holding_) {
      if (line && !line->host.empty()) ++host_lines_[std::string(line->host)];
      held_bytes_ += clean.text.size();
      Hold(clean, line);
      if (host_lines_[held_.front().line->host] > 1 || held_.size() > kLookAheadLines ||
          held_bytes_ > kLookAheadBytes) {
        Replay();
      }
      return;
    }
    Take(clean, line, false);
  }

  NcclLogInfo Finish() {
    if (holding_) Replay();
    if (!info.network) info.network = assigned_plugin_ ? assigned_plugin_ : initialized_plugin_;
    // NCCL before 2.12 printed no "Using network" line: it tried IB, and
    // only when IB found no device did it open the socket net ("NET/IB : No
    // device found." then "NET/Socket : Using [0]ens3:..."). That pair, with
    // no plugin loaded, is the socket net.
    if (!info.network && info.ib_no_device && !info.socket_interfaces.empty() &&
        (!info.net_plugin || *info.net_plugin == "internal")) {
      info.network = "Socket";
    }
    if (info.networks.empty() && info.network) info.networks.push_back(*info.network);
    // Messages without their prefix count only in a log where no INFO line
    // kept one (a prefix anywhere keeps the strict grammar), and that shows
    // itself NCCL's by its version banner: lines in NCCL's words in a text
    // that is not its log (a README, an nccl-tests table) stay unread.
    if (bare_ && prefixed_info_ == 0 && info.nccl_version) {
      MergeNcclLog(&info, bare_->Finish());
      if (errors_) errors_->insert(errors_->end(), bare_errors_.begin(), bare_errors_.end());
    }
    return std::move(info);
  }

 private:
  struct Held {
    CleanLine clean;
    std::optional<NcclLogLine> line;
    bool glued_time = false;  // GluedToTime, which the copy's host cannot tell
  };

  void Hold(const CleanLine& clean, const NcclLogLineView* line) {
    held_.push_back({clean, line ? std::optional<NcclLogLine>(line->ToLine()) : std::nullopt,
                     line && GluedToTime(*line, clean.text)});
  }

  void Replay() {
    holding_ = false;
    bool first = true;
    for (Held& h : held_) {
      if (h.line) {
        NcclLogLineView view = NcclLogLineView::Of(*h.line);
        replayed_glued_ = h.glued_time;
        Take(h.clean, &view, first);
        replayed_glued_.reset();
      } else {
        Take(h.clean, nullptr, first);
      }
      first = false;
    }
    held_.clear();
    held_bytes_ = 0;
    host_lines_.clear();  // only the first line needs the counts
  }

  void KeepNotice(LogMessage m) {
    if (info.notices.size() < kMaxKeptMessages) {
      info.notices.push_back(std::move(m));
    } else {
      ++info.dropped_notices;
    }
  }

  // Channel lines repeat with every communicator and every night. Past the
  // cap, a line is kept only when it shows a transport family (or a GDRDMA
  // NET channel) not kept yet, so Transports() and Gdrdma() stay exact.
  void KeepChannel(ChannelObservation&& obs) {
    bool new_family = families_.insert(obs.family).second;
    bool first_gdr = obs.gdrdma && !kept_gdrdma_;
    kept_gdrdma_ |= obs.gdrdma;
    if (info.channels.size() < kMaxKeptChannels || new_family || first_gdr) {
      info.channels.push_back(std::move(obs));
    } else {
      ++info.dropped_channels;
    }
  }

  void Take(const CleanLine& clean, const NcclLogLineView* line, bool first) {
    std::vector<ParseError>* errors = errors_;
    if (!line) {
      if (std::optional<LogMessage> failure = TestFailureLine(clean)) {
        KeepNotice(std::move(*failure));
      } else if (!bare_mode_ && MayBeBare(clean.text)) {
        TakeBare(clean);
      }
      return;
    }
    if (ConsoleDouble(clean, *line)) return;
    if (first && CutFromTheFront(std::string(line->host), host_lines_)) {
      Report(errors, clean.number,
             "first line starts mid-line (host \"" + std::string(line->host) +
                 "\" is the end of another host); ignored");
      return;
    }
    if (CutAtTheEnd(clean, line)) {
      Report(errors, clean.number, "last line ends without a newline (cut short?); ignored");
      return;
    }
    ++info.info_lines;
    // Lines of one host come in runs, or two hosts' lines interleave: only a
    // host other than the last two is looked up.
    if (!line->host.empty() && line->host != last_host_) {
      last_host_.swap(host_before_);
      if (line->host != last_host_) {
        last_host_.assign(line->host);
        if (hosts_seen_.insert(last_host_).second) info.hosts.push_back(last_host_);
      }
    }
    const std::string_view message = line->message;
    if (line->level == "VERSION") {
      TakeVersion(message, clean.number, &info, errors);
      return;
    }
    if (line->level == "WARN") {
      if (info.warnings.size() < kMaxKeptMessages) {
        info.warnings.push_back(LogMessage{std::string(line->host), std::string(line->level),
                                           std::string(message), clean.number});
      } else {
        ++info.dropped_warnings;
      }
      return;
    }
    // TRACE repeats connections from the receiving side ("<-"); the INFO lines
    // already have each one.
    if (line->level != "INFO") return;
    ++prefixed_info_;
    // Searched for once: a notice of its own and a branch below both need it.
    const bool gdr_disabled = HasGdrDisabled(message);
    if (SaysWhatNcclCouldNotUse(message, gdr_disabled)) {
      KeepNotice(LogMessage{std::string(line->host), "INFO", std::string(message), clean.number});
    }

    if (StartsWith(message, "NCCL version ")) {
      TakeVersion(message, clean.number, &info, errors);
    } else if (ContainsAt(message, " set by environment to ", 6)) {  // anchored on the "y"
      TakeEnvSetting(message, &info);
    } else if (StartsWith(message, "cudaDriverVersion ")) {
      TakeDriverVersion(message, &info);
    } else if (auto name =
                   KnownNetwork(NameBetween(message, "Using network ", ""), clean.number, errors)) {
      if (!info.network) info.network = std::string(*name);
      AddDistinct(&info.networks, *name);
    } else if (StartsWith(message, "Using network ")) {
      // Reported as unknown above.
    } else if (auto name = KnownNetwork(NameBetween(message, "Assigned NET plugin ", " to comm"),
                                        clean.number, errors)) {
      if (!assigned_plugin_) assigned_plugin_ = std::string(*name);
      AddDistinct(&info.networks, *name);
    } else if (auto name = KnownNetwork(NameBetween(message, "Initialized NET plugin ", ""),
                                        clean.number, errors)) {
      if (!initialized_plugin_) initialized_plugin_ = std::string(*name);
    } else if (auto plugin = AfterNetColon(message, "NET/Plugin")) {
      TakeNetPlugin(*plugin, &info);
    } else if (auto ib = AfterNetColon(message, "NET/IB")) {
      if (StartsWith(*ib, "No device found")) {
        info.ib_no_device = true;
      } else if (StartsWith(*ib, "Using")) {
        TakeIbDevicesOnce(ib->substr(5), clean.number, line->host);
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
    } else if (gdr_disabled) {
      // Plugins print it under their own prefix ("NET/IBext_v8 : ...").
      TakeGdrDisabled(message, &info);
    } else if (std::optional<CommLine> comm = ParseCommLine(message)) {
      TakeComm(*comm, line->host, clean.number, &info, &comm_ranks_seen_, &key_);
    } else if (MayBeChannelLine(message)) {
      // Most messages that get here are other prose ("Connected all rings",
      // "Trees ..."): the observation's strings are made only for a line
      // that starts like a connection.
      ChannelObservation obs;
      std::string unknown;
      switch (ParseChannelLine(message, &obs, &unknown)) {
        case ChannelLine::kConnection:
          obs.host.assign(line->host);
          obs.pid = line->pid;
          obs.cuda_device = line->cuda_device;
          obs.line = clean.number;
          KeepChannel(std::move(obs));
          break;
        case ChannelLine::kTruncated:
          Report(errors, clean.number, "truncated channel line: " + std::string(message));
          break;
        case ChannelLine::kMalformed:
          Report(errors, clean.number, "malformed channel line: " + std::string(message));
          break;
        case ChannelLine::kUnknown:
          Report(errors, clean.number,
                 "unknown transport \"" + unknown +
                     "\" in channel line (not stored): " + std::string(message));
          break;
        case ChannelLine::kNotChannel:
        case ChannelLine::kTopology:
          break;
      }
    }
  }

  // A line that is no NCCL line may be one with its prefix stripped: read
  // aside, and kept by Finish only for a log without prefixes.
  // The first letter of every message TakeBare reads (the cleaner left no
  // blank in front): one compare sends a table row away.
  static bool MayBeBare(std::string_view text) {
    if (text.empty()) return false;
    const char c = text.front();
    return c == 'C' || c == 'R' || c == 'U' || c == 'N' || c == 'c' || c == 'n';
  }

  void TakeBare(const CleanLine& clean) {
    const std::string_view text = Trim(clean.text);
    if (text.empty() || !IsBareNcclMessage(text)) return;
    if (!bare_) bare_ = std::make_unique<Impl>(&bare_errors_, /*bare=*/true);
    NcclLogLineView view;
    view.level = "INFO";
    view.message = text;
    bare_->Take(clean, &view, false);
  }

  // Whether `line` is a log console's second copy of the line before it
  // (ConsoleKey): read once, counted once.
  bool ConsoleDouble(const CleanLine& clean, const NcclLogLineView& line) {
    const bool glued = replayed_glued_ ? *replayed_glued_ : GluedToTime(line, clean.text);
    std::string_view key = ConsoleKey(clean.text, glued, &console_buffer_);
    if (key.empty()) {
      console_last_.clear();
      return false;
    }
    if (!console_last_.empty() && key == console_last_ && glued != console_last_glued_) {
      console_last_.clear();
      return true;
    }
    console_last_.assign(key);
    console_last_glued_ = glued;
    return false;
  }

  // Every rank prints the same "NET/IB : Using ..." list at every init: a
  // list already read whole from the same host (no error) adds nothing, so it
  // is not read again. Bounded: past the cap every list is read.
  void TakeIbDevicesOnce(std::string_view list, int line, std::string_view host) {
    key_.assign(host);
    key_.push_back('\n');
    key_.append(list);
    if (clean_ib_lists_.count(key_)) return;
    size_t errors_before = errors_ ? errors_->size() : 0;
    std::vector<ParseError> local;
    std::vector<ParseError>* errors = errors_ ? errors_ : &local;
    TakeIbDevices(list, line, host, &info, &devices_seen_, errors);
    if (errors->size() == errors_before && clean_ib_lists_.size() < kMaxRememberedIbLists) {
      clean_ib_lists_.insert(key_);
    }
  }

  static constexpr size_t kMaxRememberedIbLists = 4096;

  NcclLogInfo info;
  std::vector<ParseError>* errors_;
  // Lines read without their prefix (TakeBare), and their errors; a parser
  // of such lines (bare_mode_) looks for no more of them.
  bool bare_mode_ = false;
  std::unique_ptr<Impl> bare_;
  std::vector<ParseError> bare_errors_;
  int64_t prefixed_info_ = 0;
  // The last console line's key (ConsoleDouble) and whether it was the glued
  // form.
  std::string console_last_;
  bool console_last_glued_ = false;
  // Set while a held line is replayed: its view holds copies, not the text.
  std::optional<bool> replayed_glued_;
  std::string console_buffer_;
  std::unordered_set<std::string> clean_ib_lists_;
  std::string key_;
  std::string last_host_;
  std::string host_before_;  // the host before last_host_, already in hosts_seen_
  std::unordered_set<std::string> hosts_seen_;
  std::set<DeviceKey> devices_seen_;
  std::unordered_set<std::string> comm_ranks_seen_;
  std::set<std::string> families_;
  bool kept_gdrdma_ = false;
  // 2.27+ plugin lines only stand in for "Using network" when it is missing.
  std::optional<std::string> assigned_plugin_;
  std::optional<std::string> initialized_plugin_;
  int64_t fed_ = 0;
  bool holding_ = false;
  std::vector<Held> held_;
  size_t held_bytes_ = 0;
  std::unordered_map<std::string, int> host_lines_;
};

NcclLogParser::NcclLogParser(std::vector<ParseError>* errors)
    : impl_(std::make_unique<Impl>(errors)) {}
NcclLogParser::~NcclLogParser() = default;
void NcclLogParser::Feed(const CleanLine& line, std::optional<NcclLogLine> split) {
  if (!split) return impl_->Feed(line, nullptr);
  NcclLogLineView view = NcclLogLineView::Of(*split);
  impl_->Feed(line, &view);
}
void NcclLogParser::Feed(const CleanLine& line, const NcclLogLineView* split) {
  impl_->Feed(line, split);
}
void NcclLogParser::Feed(const CleanLine& line) {
  NcclLogLineView view;
  impl_->Feed(line, SplitNcclLogLineView(line.text, &view) ? &view : nullptr);
}
NcclLogInfo NcclLogParser::Finish() { return impl_->Finish(); }

NcclLogInfo ParseNcclLog(const std::vector<CleanLine>& lines, std::vector<ParseError>* errors) {
  NcclLogParser parser(errors);
  for (const CleanLine& line : lines) parser.Feed(line);
  return parser.Finish();
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
  if (from.nranks && (!into->nranks || *from.nranks > *into->nranks)) {
    into->nranks = from.nranks;
    into->nnodes = from.nnodes;
    into->local_ranks = from.local_ranks;
  } else if (from.nranks && *from.nranks == *into->nranks) {
    if (!into->nnodes) into->nnodes = from.nnodes;
    if (!into->local_ranks) into->local_ranks = from.local_ranks;
  }
  into->comm_ranks.insert(into->comm_ranks.end(), from.comm_ranks.begin(), from.comm_ranks.end());
  // The first file's value of a setting wins, as within one file.
  into->env_settings.insert(from.env_settings.begin(), from.env_settings.end());
  if (!into->cuda_driver_version) into->cuda_driver_version = from.cuda_driver_version;
  if (!into->net_plugin || (*into->net_plugin == "internal" && from.net_plugin)) {
    into->net_plugin = from.net_plugin;
  }
  into->warnings.insert(into->warnings.end(), from.warnings.begin(), from.warnings.end());
  into->notices.insert(into->notices.end(), from.notices.begin(), from.notices.end());
  into->info_lines += from.info_lines;
  into->dropped_warnings += from.dropped_warnings;
  into->dropped_notices += from.dropped_notices;
  into->dropped_channels += from.dropped_channels;
  into->dropped_comm_ranks += from.dropped_comm_ranks;
}

}  // namespace fabtrack
