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
#include <pqxx/pqxx>
#include <sstream>

#include "collector/counters/counter_deltas.h"
#include "collector/counters/port_sample_json.h"
#include "core/content_hash.h"
#include "core/run_record_json.h"
#include "store/port_writer.h"
#include "store/run_writer.h"

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
  std::string text = "{\"bracket\":" + bracket.dump() + ",\"run\":";
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

bool SupportedVersion(const nlohmann::json& header) {
  const int version = header.value("version", 0);
  return header.value("format", "") == kFormat && (version == 1 || version == kVersion);
}

}  // namespace

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
  const nlohmann::json header = {
      {"format", kFormat},
      {"version", kVersion},
      {"kind", batch.kind == SpoolBatch::Kind::kRun ? "run" : "host_sample"},
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

AppliedBatch ApplyBatch(pqxx::transaction_base& txn, const SpoolBatch& batch) {
  AppliedBatch applied;
  if (batch.kind == SpoolBatch::Kind::kHostSample) {
    applied.samples = WriteHostSample(txn, batch.cluster, batch.host, batch.sampled_at,
                                      batch.run_id, batch.phase);
    return applied;
  }
  WriteRunResult result = WriteRun(txn, batch.run);
  applied.run_id = result.run_id;
  applied.inserted = result.inserted;
  if (!batch.bracket || !result.inserted) return applied;
  const SpooledBracket& b = *batch.bracket;
  for (const HostPorts& after : b.after) {
    auto before = std::find_if(b.before.begin(), b.before.end(),
                               [&](const HostPorts& h) { return h.host == after.host; });
    if (before == b.before.end()) continue;
    WriteHostSample(txn, batch.run.cluster, *before, b.started_at, result.run_id, "before");
    WriteHostSample(txn, batch.run.cluster, after, b.ended_at, result.run_id, "after");
    WriteRunPortDeltas(txn, batch.run.cluster, after, ComputeDeltas(*before, after, b.seconds),
                       result.run_id, b.started_at, b.ended_at);
    ++applied.bracketed_hosts;
  }
  return applied;
}

bool IsDatabaseOutage(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) ||
      dynamic_cast<const pqxx::in_doubt_error*>(&e)) {
    return true;
  }
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) {
    // Class 08 connection exception, 57 operator intervention (shutdown),
    // 53 insufficient resources (too many connections, disk full).
    const std::string state = sql->sqlstate();
    if (state.rfind("08", 0) == 0 || state.rfind("57", 0) == 0 || state.rfind("53", 0) == 0) {
      return true;
    }
    const std::string what = sql->what();
    return what.find("terminating connection") != std::string::npos ||
           what.find("server closed the connection") != std::string::npos;
  }
  // Any other libpqxx failure is on the client or the wire (a COPY cut off
  // by a dying server reports "Error writing to table"), not a refusal.
  return dynamic_cast<const pqxx::failure*>(&e) != nullptr;
}

std::string ReadInstanceId(pqxx::connection_base& connection) {
  try {
    pqxx::nontransaction txn(connection);
    pqxx::result r = txn.exec("SELECT id::text FROM fabtrack_instance");
    return r.empty() ? "" : r[0][0].c_str();
  } catch (const pqxx::sql_error&) {
    return "";  // before migration 008, or no SELECT on it
  }
}

ReplayResult ReplaySpool(const Spool& spool, pqxx::connection_base& connection,
                         const SpoolTarget& target, std::ostream& log, bool adopt) {
  ReplayResult result;
  std::vector<std::string> pending = spool.Pending(target);
  const std::string here = adopt ? "" : ReadInstanceId(connection);
  for (size_t i = 0; i < pending.size(); ++i) {
    const std::string& path = pending[i];
    std::string why;
    std::optional<SpoolBatch> batch = spool.Read(path, &why);
    if (!batch) {
      log << "fabtrack spool: " << why << "; moved to " << spool.dir() << "/corrupt\n";
      spool.Quarantine(path);
      ++result.corrupt;
      continue;
    }
    if (!here.empty() && !batch->instance_id.empty() && batch->instance_id != here) {
      log << "fabtrack spool: " << path << " was spooled for database instance "
          << batch->instance_id << " but " << target.Describe() << " is instance " << here
          << ": not stored here (`spool replay --target` moves it, `spool drop` deletes it)\n";
      ++result.foreign;
      continue;
    }
    try {
      pqxx::work txn(connection);
      ApplyBatch(txn, *batch);
      txn.commit();
    } catch (const pqxx::sql_error& e) {
      if (IsDatabaseOutage(e)) {
        result.remaining = static_cast<int>(pending.size() - i);
        log << "fabtrack spool: database lost during replay (" << e.what() << "); "
            << result.remaining << " batch(es) stay spooled\n";
        return result;
      }
      // The database is up and refuses this batch (a constraint, a value):
      // it would be refused forever; set it aside and go on.
      log << "fabtrack spool: " << path << ": refused by the database (" << e.what()
          << "); moved to " << spool.dir() << "/corrupt\n";
      spool.Quarantine(path);
      ++result.corrupt;
      continue;
    } catch (const pqxx::failure& e) {
      result.remaining = static_cast<int>(pending.size() - i);
      log << "fabtrack spool: database lost during replay (" << e.what() << "); "
          << result.remaining << " batch(es) stay spooled\n";
      return result;
    }
    spool.Remove(path);
    ++result.replayed;
  }
  return result;
}

}  // namespace fabtrack::store
