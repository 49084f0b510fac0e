#include "store/spool.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/ab_comparison_json.h"
#include "core/content_hash.h"
#include "core/fabric_scan_json.h"
#include "core/locate_json.h"
#include "core/port_sample_json.h"
#include "core/ras_watch_record.h"
#include "core/run_record_json.h"

namespace fabtrack::store {
namespace {

namespace fs = std::filesystem;
constexpr const char* kFormat = "fabtrack-spool";
// 2: the header names the batch's target database. 1 (no target) is still
// read; its batches are replayed only when an operator names them.
constexpr int kVersion = 2;
constexpr const char* kSuffix = ".batch";

void FsyncDir(const std::string& dir) {
  int fd = open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  fsync(fd);
  close(fd);
}

void WriteAll(int fd, const std::string& data, const std::string& path) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw SpoolError("cannot write " + path + ": " + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
}

// The batch's JSON text. A run's record is streamed (AppendRunRecordJson):
// as one document a large run would take ten times its text in memory just
// when the database is down and the node may be short of it.
std::string BatchPayload(const SpoolBatch& b) {
  using nlohmann::json;
  if (b.kind == SpoolBatch::Kind::kLocate) return LocateRecordToJson(b.locate).dump();
  if (b.kind == SpoolBatch::Kind::kAb) return AbRecordToJson(b.ab).dump();
  if (b.kind == SpoolBatch::Kind::kRas) return RasWatchRecordToJson(b.ras).dump();
  if (b.kind == SpoolBatch::Kind::kFabricScan) {
    return json{{"cluster", b.cluster},
                {"scan", FabricScanToJson(b.fabric_scan)},
                {"findings", json::parse(b.fabric_findings)}}
        .dump();
  }
  if (b.kind == SpoolBatch::Kind::kHostSample) {
    return json{{"cluster", b.cluster},
                {"sampled_at", b.sampled_at},
                {"phase", b.phase},
                {"run_id", b.run_id ? json(*b.run_id) : json(nullptr)},
                {"host", HostPortsToJson(b.host)}}
        .dump();
  }
  json bracket = nullptr;
  if (b.bracket) {
    json before = json::array(), after = json::array();
    for (const HostPorts& h : b.bracket->before) before.push_back(HostPortsToJson(h));
    for (const HostPorts& h : b.bracket->after) after.push_back(HostPortsToJson(h));
    bracket = {{"started_at", b.bracket->started_at},
               {"ended_at", b.bracket->ended_at},
               {"seconds", b.bracket->seconds},
               {"before", before},
               {"after", after}};
  }
  std::string text = "{\"bracket\":" + bracket.dump() + ",";
  // The switch side of the run's window (`sweep --fabric-scan`), when taken.
  if (b.fabric_window) {
    text += "\"fabric_window\":" + RunFabricWindowToJson(*b.fabric_window).dump() + ",";
  }
  if (!b.cpu_windows.empty()) {
    nlohmann::json windows = nlohmann::json::array();
    for (const NodeCpuWindow& w : b.cpu_windows) windows.push_back(NodeCpuWindowToJson(w));
    text += "\"cpu_windows\":" + windows.dump() + ",";
  }
  text += "\"run\":";
  AppendRunRecordJson(b.run, &text);
  text += '}';
  return text;
}

std::vector<HostPorts> HostsFromJson(const nlohmann::json& list, std::string* why) {
  std::vector<HostPorts> out;
  for (const nlohmann::json& h : list) {
    std::optional<HostPorts> host = HostPortsFromJson(h, why);
    if (!host) throw SpoolError(*why);
    out.push_back(std::move(*host));
  }
  return out;
}

nlohmann::json TargetToJson(const SpoolTarget& t) {
  return {{"host", t.host}, {"port", t.port}, {"dbname", t.dbname}, {"user", t.user}};
}

SpoolTarget TargetFromHeader(const nlohmann::json& header) {
  SpoolTarget t;
  if (!header.contains("target") || !header["target"].is_object()) return t;  // version 1
  const nlohmann::json& j = header["target"];
  t.host = j.value("host", "");
  t.port = j.value("port", "");
  t.dbname = j.value("dbname", "");
  t.user = j.value("user", "");
  return t;
}

const char* KindName(SpoolBatch::Kind kind) {
  switch (kind) {
    case SpoolBatch::Kind::kRun:
      return "run";
    case SpoolBatch::Kind::kHostSample:
      return "host_sample";
    case SpoolBatch::Kind::kLocate:
      return "locate";
    case SpoolBatch::Kind::kAb:
      return "ab";
    case SpoolBatch::Kind::kRas:
      return "ras";
    case SpoolBatch::Kind::kFabricScan:
      return "fabric_scan";
  }
  return "run";
}

bool SupportedVersion(const nlohmann::json& header) {
  const int version = header.value("version", 0);
  return header.value("format", "") == kFormat && (version == 1 || version == kVersion);
}

}  // namespace

// The special members, out of line (the header says why).
SpoolBatch::SpoolBatch() = default;
SpoolBatch::SpoolBatch(const SpoolBatch&) = default;
SpoolBatch::SpoolBatch(SpoolBatch&&) noexcept = default;
SpoolBatch& SpoolBatch::operator=(const SpoolBatch&) = default;
SpoolBatch& SpoolBatch::operator=(SpoolBatch&&) noexcept = default;
SpoolBatch::~SpoolBatch() = default;

std::string DefaultSpoolDir() {
  if (const char* dir = std::getenv("FABTRACK_SPOOL_DIR"); dir && *dir) return dir;
  if (geteuid() == 0) return "/var/spool/fabtrack";
  if (const char* state = std::getenv("XDG_STATE_HOME"); state && *state) {
    return std::string(state) + "/fabtrack/spool";
  }
  const char* home = std::getenv("HOME");
  return std::string(home && *home ? home : "/tmp") + "/.local/state/fabtrack/spool";
}

std::string Spool::Put(const SpoolBatch& batch) {
  std::error_code ec;
  const bool existed = fs::exists(dir_, ec);
  fs::create_directories(dir_, ec);
  if (ec) throw SpoolError("cannot create spool " + dir_ + ": " + ec.message());
  if (!existed) chmod(dir_.c_str(), 0700);
  const std::string payload = BatchPayload(batch);
  const nlohmann::json header = {{"format", kFormat},
                                 {"version", kVersion},
                                 {"kind", KindName(batch.kind)},
                                 {"target", TargetToJson(batch.target)},
                                 {"instance", batch.instance_id},
                                 {"sha256", Sha256Hex(payload)}};
  // Names sort in creation order: nanoseconds, then pid and a counter.
  static std::atomic<int> sequence{0};
  const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count();
  char name[96];
  std::snprintf(name, sizeof name, "%020lld-%08d-%06d", static_cast<long long>(ns),
                static_cast<int>(getpid()), sequence++);
  const std::string path = dir_ + "/" + name + kSuffix;
  const std::string tmp = dir_ + "/." + name + ".tmp";
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) throw SpoolError("cannot write " + tmp + ": " + std::strerror(errno));
  try {
    WriteAll(fd, header.dump() + "\n", tmp);
    WriteAll(fd, payload, tmp);
    WriteAll(fd, "\n", tmp);
    if (fsync(fd) != 0) throw SpoolError("cannot sync " + tmp + ": " + std::strerror(errno));
  } catch (...) {
    close(fd);
    unlink(tmp.c_str());
    throw;
  }
  close(fd);
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    throw SpoolError("cannot rename to " + path + ": " + std::strerror(errno));
  }
  FsyncDir(dir_);
  return path;
}

std::vector<std::string> Spool::Pending() const {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir_, ec)) {
    const std::string name = entry.path().filename().string();
    if (entry.is_regular_file() && name.size() > 6 && name.ends_with(kSuffix) &&
        name.front() != '.') {
      out.push_back(entry.path().string());
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> Spool::Pending(const SpoolTarget& target) const {
  std::vector<std::string> out;
  for (const PendingBatch& b : List()) {
    if (b.target == target) out.push_back(b.path);
  }
  return out;
}

std::vector<PendingBatch> Spool::List() const {
  std::vector<PendingBatch> out;
  for (const std::string& path : Pending()) {
    PendingBatch b;
    b.path = path;
    std::error_code ec;
    b.bytes = fs::file_size(path, ec);
    struct stat st {};
    if (stat(path.c_str(), &st) == 0) b.modified_unix = st.st_mtime;
    std::ifstream in(path);
    std::string header_line;
    nlohmann::json header;
    if (std::getline(in, header_line)) header = nlohmann::json::parse(header_line, nullptr, false);
    if (header.is_discarded() || !header.is_object() || !SupportedVersion(header)) {
      b.kind = "unreadable";
    } else {
      b.kind = header.value("kind", "run");
      b.target = TargetFromHeader(header);
    }
    out.push_back(std::move(b));
  }
  return out;
}

std::optional<SpoolBatch> Spool::Read(const std::string& path, std::string* why) const {
  std::ifstream in(path);
  std::string header_line, payload;
  if (!std::getline(in, header_line) || !std::getline(in, payload)) {
    *why = path + ": truncated batch";
    return std::nullopt;
  }
  nlohmann::json header = nlohmann::json::parse(header_line, nullptr, false);
  if (header.is_discarded() || !header.is_object() || !SupportedVersion(header)) {
    *why = path + ":1: not a fabtrack spool batch (version 1 or " + std::to_string(kVersion) + ")";
    return std::nullopt;
  }
  if (header.value("sha256", "") != Sha256Hex(payload)) {
    *why = path + ":2: checksum mismatch (damaged batch)";
    return std::nullopt;
  }
  const bool host_sample = header.value("kind", "") == "host_sample";
  nlohmann::json doc;
  SpoolBatch batch;
  batch.target = TargetFromHeader(header);
  batch.instance_id = header.value("instance", "");
  // A verdict record (locate, A/B): one JSON document read by its serializer.
  auto record = [&](auto from_json, SpoolBatch::Kind kind, auto SpoolBatch::*slot) {
    const nlohmann::json parsed = nlohmann::json::parse(payload, nullptr, false);
    auto read = parsed.is_discarded() ? std::nullopt : from_json(parsed, why);
    if (!read) {
      *why = path + ":2: " + (parsed.is_discarded() ? "payload is not JSON" : *why);
      return std::optional<SpoolBatch>();
    }
    batch.kind = kind;
    batch.*slot = std::move(*read);
    return std::optional<SpoolBatch>(std::move(batch));
  };
  if (header.value("kind", "") == "locate") {
    return record(LocateRecordFromJson, SpoolBatch::Kind::kLocate, &SpoolBatch::locate);
  }
  if (header.value("kind", "") == "ab") {
    return record(AbRecordFromJson, SpoolBatch::Kind::kAb, &SpoolBatch::ab);
  }
  if (header.value("kind", "") == "ras") {
    return record(RasWatchRecordFromJson, SpoolBatch::Kind::kRas, &SpoolBatch::ras);
  }
  if (header.value("kind", "") == "fabric_scan") {
    const nlohmann::json parsed = nlohmann::json::parse(payload, nullptr, false);
    std::string inner;
    std::optional<FabricScan> scan;
    if (parsed.is_object() && parsed.contains("scan")) {
      scan = FabricScanFromJson(parsed["scan"], &inner);
    }
    if (!scan || !parsed["cluster"].is_string() || !parsed["findings"].is_array()) {
      *why = path + ":2: " +
             (parsed.is_discarded() ? std::string("payload is not JSON")
              : inner.empty()       ? std::string("not a fabric scan batch")
                                    : "scan." + inner);
      return std::nullopt;
    }
    batch.kind = SpoolBatch::Kind::kFabricScan;
    batch.cluster = parsed["cluster"].get<std::string>();
    batch.fabric_scan = std::move(*scan);
    batch.fabric_findings = parsed["findings"].dump();
    return batch;
  }
  if (host_sample) {
    doc = nlohmann::json::parse(payload, nullptr, false);
  } else {
    // A run's long lists are read element by element, never held whole.
    std::optional<RunRecord> run = ParseRunRecordText(payload, "run", &doc, why);
    if (!run) {
      *why = path + ":2: " + (why->starts_with("not JSON") ? "payload is " + *why : *why);
      return std::nullopt;
    }
    batch.run = std::move(*run);
  }
  if (doc.is_discarded()) {
    *why = path + ":2: payload is not JSON";
    return std::nullopt;
  }
  try {
    if (host_sample) {
      batch.kind = SpoolBatch::Kind::kHostSample;
      batch.cluster = doc.at("cluster").get<std::string>();
      batch.sampled_at = doc.at("sampled_at").get<std::string>();
      batch.phase = doc.at("phase").get<std::string>();
      if (doc.contains("run_id") && doc["run_id"].is_number_integer()) {
        batch.run_id = doc["run_id"].get<int64_t>();
      }
      std::optional<HostPorts> host = HostPortsFromJson(doc.at("host"), why);
      if (!host) throw SpoolError(*why);
      batch.host = std::move(*host);
      return batch;
    }
    if (const nlohmann::json& b = doc.at("bracket"); !b.is_null()) {
      SpooledBracket bracket;
      bracket.started_at = b.at("started_at").get<std::string>();
      bracket.ended_at = b.at("ended_at").get<std::string>();
      bracket.seconds = b.at("seconds").get<double>();
      bracket.before = HostsFromJson(b.at("before"), why);
      bracket.after = HostsFromJson(b.at("after"), why);
      batch.bracket = std::move(bracket);
    }
    if (doc.contains("fabric_window")) {
      std::string inner;
      std::optional<RunFabricWindow> window = RunFabricWindowFromJson(doc["fabric_window"], &inner);
      if (!window) throw SpoolError("fabric_window." + inner);
      batch.fabric_window = std::move(*window);
    }
    if (doc.contains("cpu_windows")) {
      for (const nlohmann::json& w : doc["cpu_windows"]) {
        std::string inner;
        std::optional<NodeCpuWindow> window = NodeCpuWindowFromJson(w, &inner);
        if (!window) throw SpoolError("cpu_windows." + inner);
        batch.cpu_windows.push_back(std::move(*window));
      }
    }
    return batch;
  } catch (const std::exception& e) {
    *why = path + ":2: " + e.what();
    return std::nullopt;
  }
}

void Spool::Remove(const std::string& path) const {
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    throw SpoolError("cannot remove " + path + ": " + std::strerror(errno));
  }
  FsyncDir(dir_);
}

void Spool::Quarantine(const std::string& path) const {
  const std::string bad = dir_ + "/corrupt";
  std::error_code ec;
  fs::create_directories(bad, ec);
  fs::rename(path, bad + "/" + fs::path(path).filename().string(), ec);
  if (ec) throw SpoolError("cannot move " + path + " aside: " + ec.message());
  FsyncDir(dir_);
}

}  // namespace fabtrack::store
