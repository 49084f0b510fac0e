#include "collector/counters/sysfs_ports.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstring>
#include <limits>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "collector/parse/sysfs_values.h"

namespace fabtrack {
namespace {

// What the files say: one reading for live trees and saved dumps.
using LegacyCounter = SysfsLegacyCounter;
using ExtName = SysfsExtName;
constexpr const auto& kLegacyCounters = kSysfsLegacyCounters;
constexpr const auto& kExtNames = kSysfsExtNames;

constexpr char kVanished[] = "vanished while reading";

class Fd {
 public:
  explicit Fd(int fd) : fd_(fd) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd_ >= 0) ::close(fd_);
  }
  int get() const { return fd_; }
  bool ok() const { return fd_ >= 0; }

 private:
  int fd_;
};

class Dir {
 public:
  // Takes ownership of fd (closed even when fdopendir fails).
  explicit Dir(int fd) : dir_(fd >= 0 ? ::fdopendir(fd) : nullptr) {
    if (fd >= 0 && dir_ == nullptr) ::close(fd);
  }
  Dir(const Dir&) = delete;
  Dir& operator=(const Dir&) = delete;
  ~Dir() {
    if (dir_ != nullptr) ::closedir(dir_);
  }
  bool ok() const { return dir_ != nullptr; }
  int fd() const { return ::dirfd(dir_); }
  // The next entry other than . and .., or nullptr.
  const dirent* Next() {
    while (const dirent* e = ::readdir(dir_)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) return e;
    }
    return nullptr;
  }

 private:
  DIR* dir_;
};

int OpenDirAt(int dirfd, const char* name) {
  int fd;
  do {
    fd = ::openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  return fd;
}

enum class Read { kOk, kMissing, kFailed };

// Reads a small attribute with one open/read/close; trailing whitespace is
// stripped. kMissing is ENOENT/ENOTDIR (the file, or the directory holding it,
// is not there); any other failure (EINVAL, EIO, EACCES, EAGAIN, ...: what
// sysfs returns when the hardware cannot answer) is kFailed.
template <size_t N>
Read ReadAttr(int dirfd, const char* name, char (&buf)[N], std::string_view* out) {
  int fd;
  do {
    fd = ::openat(dirfd, name, O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) return errno == ENOENT || errno == ENOTDIR ? Read::kMissing : Read::kFailed;
  size_t len = 0;
  bool failed = false;
  while (len < N) {
    ssize_t n = ::read(fd, buf + len, N - len);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = true;
    if (n <= 0) break;
    len += static_cast<size_t>(n);
  }
  // A value that fills the buffer and goes on is not one sysfs writes: the
  // part read would parse as something it is not (found by fuzzing).
  if (!failed && len == N) {
    char extra;
    ssize_t n;
    do {
      n = ::read(fd, &extra, 1);
    } while (n < 0 && errno == EINTR);
    if (n != 0) failed = true;
  }
  ::close(fd);
  if (failed) return Read::kFailed;
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ' || buf[len - 1] == '\t' ||
                     buf[len - 1] == '\r' || buf[len - 1] == '\0')) {
    --len;
  }
  *out = std::string_view(buf, len);
  return Read::kOk;
}

std::optional<uint64_t> ParseU64(std::string_view s) { return ParseSysfsCounter(s); }
void ParseCoded(std::string_view s, std::optional<std::string>* text, std::optional<int>* code) {
  ParseSysfsCoded(s, text, code);
}
std::optional<double> ParseRateGbps(std::string_view s) { return ParseSysfsRateGbps(s); }

std::optional<std::string> ReadText(int dirfd, const char* name) {
  char buf[256];
  std::string_view v;
  if (ReadAttr(dirfd, name, buf, &v) != Read::kOk || v.empty()) return std::nullopt;
  return std::string(v);
}

// Whether a path is gone (a directory removed, or a dangling symlink).
bool Gone(const std::string& path) {
  struct stat st;
  return ::stat(path.c_str(), &st) != 0 && (errno == ENOENT || errno == ENOTDIR);
}

// Reads every regular file of dir <name> under port_fd that want(name)
// accepts as a counter (the others are not opened). Returns false when a
// listed file disappeared (ENOENT after readdir). Calls store(name, value)
// for each usable value.
template <typename Want, typename Store>
bool ReadCounterDir(int port_fd, const char* name, Want want, Store store) {
  Dir dir(OpenDirAt(port_fd, name));
  if (!dir.ok()) return true;  // no such directory on this kernel/driver
  bool intact = true;
  char buf[64];
  while (const dirent* e = dir.Next()) {
    if (e->d_type == DT_DIR || !want(std::string_view(e->d_name))) continue;
    std::string_view text;
    switch (ReadAttr(dir.fd(), e->d_name, buf, &text)) {
      case Read::kOk:
        // "N/A (no PMA)", empty and garbled values fail to parse: absent.
        if (auto v = ParseU64(text)) store(std::string_view(e->d_name), *v);
        break;
      case Read::kMissing:
        intact = false;
        break;
      case Read::kFailed:
        break;
    }
  }
  return intact;
}

// The netdev of a RoCE/iWARP port: the GID table's first entry, else the
// PCI function's net/ directory (its only entry, or the one whose dev_port is
// port - 1 on dual-port functions such as mlx4).
std::optional<std::string> ReadNetdev(int dev_fd, int port_fd, int port) {
  if (auto nd = ReadText(port_fd, "gid_attrs/ndevs/0")) return nd;
  Dir net(OpenDirAt(dev_fd, "device/net"));
  if (!net.ok()) return std::nullopt;
  std::vector<std::string> names;
  while (const dirent* e = net.Next()) names.emplace_back(e->d_name);
  if (names.size() == 1) return names.front();
  std::sort(names.begin(), names.end());
  for (const std::string& n : names) {
    char buf[32];
    std::string_view v;
    std::string rel = n + "/dev_port";
    if (ReadAttr(net.fd(), rel.c_str(), buf, &v) == Read::kOk &&
        ParseU64(v) == uint64_t(port - 1)) {
      return n;
    }
  }
  return std::nullopt;
}

struct DeviceInfo {
  std::optional<std::string> node_guid, fw_version, board_id;
};

// Reads one port into *s. Returns false when the port vanished.
bool ReadPort(int dev_fd, int port_fd, const std::string& port_path, const DeviceInfo& info,
              const HwCounterSelection& hw, PortSample* s) {
  s->node_guid = info.node_guid;
  s->fw_version = info.fw_version;
  s->board_id = info.board_id;

  char buf[256];
  std::string_view v;
  Read st = ReadAttr(port_fd, "state", buf, &v);
  if (st == Read::kMissing && Gone(port_path)) return false;
  if (st == Read::kOk) ParseCoded(v, &s->state, &s->state_code);
  if (ReadAttr(port_fd, "phys_state", buf, &v) == Read::kOk) {
    ParseCoded(v, &s->phys_state, &s->phys_state_code);
  }
  if (ReadAttr(port_fd, "rate", buf, &v) == Read::kOk && !v.empty()) {
    s->rate_text = std::string(v);
    s->rate_gbps = ParseRateGbps(v);
  }
  s->link_layer = ReadText(port_fd, "link_layer");
  s->lid = ReadText(port_fd, "lid");
  if (s->link_layer == "Ethernet") s->netdev = ReadNetdev(dev_fd, port_fd, s->port);

  auto every = [](std::string_view) { return true; };
  bool intact = ReadCounterDir(
      port_fd, "counters", every,
      [&](std::string_view name, uint64_t value) { s->counters.emplace(name, value); });
  // Which of the data counters a 64-bit counters_ext value replaced.
  std::vector<std::string> widened;
  intact &=
      ReadCounterDir(port_fd, "counters_ext", every, [&](std::string_view name, uint64_t value) {
        for (const ExtName& x : kExtNames) {
          if (x.file == name) {
            s->counters.insert_or_assign(x.key, value);
            widened.push_back(x.key);
            return;
          }
        }
        s->counters.insert_or_assign(std::string(name), value);
      });
  if (hw.ReadsAny()) {
    // lifespan is a setting, not a counter: never read.
    auto wanted = [&](std::string_view name) { return name != "lifespan" && hw.Wants(name); };
    intact &= ReadCounterDir(
        port_fd, "hw_counters", wanted,
        [&](std::string_view name, uint64_t value) { s->hw_counters.emplace(name, value); });
  }
  if (!intact && Gone(port_path)) return false;

  FinishSysfsPort(widened, s);
  return true;
}

void ReadDevice(int class_fd, const std::string& class_path, const std::string& name,
                const HwCounterSelection& hw, HostPorts* out) {
  const std::string dev_path = class_path + "/" + name;
  Fd dev(OpenDirAt(class_fd, name.c_str()));
  if (!dev.ok()) {
    if (errno == ENOENT) {
      out->problems.push_back({dev_path, std::string("device ") + kVanished});
    } else if (errno != ENOTDIR) {
      out->problems.push_back({dev_path, std::string("cannot open: ") + std::strerror(errno)});
    }
    return;
  }
  Dir ports(OpenDirAt(dev.get(), "ports"));
  if (!ports.ok()) {
    if (Gone(dev_path)) out->problems.push_back({dev_path, std::string("device ") + kVanished});
    return;
  }
  std::vector<std::pair<int, std::string>> numbers;
  while (const dirent* e = ports.Next()) {
    std::string_view n(e->d_name);
    int port = 0;
    auto [end, ec] = std::from_chars(n.data(), n.data() + n.size(), port);
    if (ec == std::errc() && end == n.data() + n.size() && port > 0) numbers.emplace_back(port, n);
  }
  std::sort(numbers.begin(), numbers.end());

  DeviceInfo info;
  info.node_guid = ReadText(dev.get(), "node_guid");
  info.fw_version = ReadText(dev.get(), "fw_ver");
  info.board_id = ReadText(dev.get(), "board_id");

  for (const auto& [port, port_name] : numbers) {
    const std::string port_path = dev_path + "/ports/" + port_name;
    PortSample s;
    s.device = name;
    s.port = port;
    Fd pfd(OpenDirAt(ports.fd(), port_name.c_str()));
    if (!pfd.ok()) {
      if (errno == ENOENT) {
        out->problems.push_back({port_path, std::string("port ") + kVanished});
      } else if (errno != ENOTDIR) {
        out->problems.push_back({port_path, std::string("cannot open: ") + std::strerror(errno)});
      }
      continue;
    }
    if (ReadPort(dev.get(), pfd.get(), port_path, info, hw, &s)) {
      out->ports.push_back(std::move(s));
    } else {
      out->problems.push_back({port_path, std::string("port ") + kVanished});
    }
  }
}

}  // namespace

bool NaturalLess(std::string_view a, std::string_view b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    auto digit = [](char c) { return c >= '0' && c <= '9'; };
    if (digit(a[i]) && digit(b[j])) {
      size_t ie = i, je = j;
      while (ie < a.size() && digit(a[ie])) ++ie;
      while (je < b.size() && digit(b[je])) ++je;
      std::string_view na = a.substr(i, ie - i), nb = b.substr(j, je - j);
      while (na.size() > 1 && na.front() == '0') na.remove_prefix(1);
      while (nb.size() > 1 && nb.front() == '0') nb.remove_prefix(1);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ie;
      j = je;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i;
      ++j;
    }
  }
  if ((a.size() - i) != (b.size() - j)) return (a.size() - i) < (b.size() - j);
  return a < b;
}

HostPorts ReadSysfsPorts(const std::string& sysfs_root, const HwCounterSelection& hw) {
  HostPorts out;
  const std::string class_path = sysfs_root + "/class/infiniband";
  Dir cls(OpenDirAt(AT_FDCWD, class_path.c_str()));
  std::vector<std::string> names;
  if (cls.ok()) {
    while (const dirent* e = cls.Next()) names.emplace_back(e->d_name);
  } else if (errno != ENOENT && errno != ENOTDIR) {
    out.problems.push_back({class_path, std::string("cannot list: ") + std::strerror(errno)});
    return out;
  }
  if (names.empty()) {
    out.problems.push_back({class_path, "no RDMA devices under " + class_path});
    return out;
  }
  std::sort(names.begin(), names.end(), NaturalLess);
  for (const std::string& name : names) ReadDevice(cls.fd(), class_path, name, hw, &out);
  return out;
}

std::vector<std::string> HwCounterNames(const std::string& sysfs_root) {
  std::vector<std::string> names;
  Dir cls(OpenDirAt(AT_FDCWD, (sysfs_root + "/class/infiniband").c_str()));
  if (!cls.ok()) return names;
  while (const dirent* dev = cls.Next()) {
    Fd dev_fd(OpenDirAt(cls.fd(), dev->d_name));
    if (!dev_fd.ok()) continue;
    Dir ports(OpenDirAt(dev_fd.get(), "ports"));
    if (!ports.ok()) continue;
    while (const dirent* port = ports.Next()) {
      Fd port_fd(OpenDirAt(ports.fd(), port->d_name));
      if (!port_fd.ok()) continue;
      Dir hw(OpenDirAt(port_fd.get(), "hw_counters"));
      if (!hw.ok()) continue;
      while (const dirent* e = hw.Next()) {
        if (e->d_type != DT_DIR && std::strcmp(e->d_name, "lifespan") != 0) {
          names.emplace_back(e->d_name);
        }
      }
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

namespace {

double MonotonicSeconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// pread of a small attribute, trailing whitespace trimmed; false on failure.
bool PreadAttr(int fd, char* buf, size_t size, std::string_view* out) {
  ssize_t n;
  do {
    n = ::pread(fd, buf, size - 1, 0);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return false;
  size_t len = static_cast<size_t>(n);
  while (len > 0 && (buf[len - 1] == '\n' || buf[len - 1] == ' ')) --len;
  *out = std::string_view(buf, len);
  return true;
}

int OpenFile(const std::string& path) { return ::open(path.c_str(), O_RDONLY | O_CLOEXEC); }

// Assigns only when different, so that an unchanged value never allocates.
void SetIfChanged(std::optional<std::string>* field, std::string_view value) {
  if (!*field || **field != value) *field = std::string(value);
}

}  // namespace

SysfsPortSampler::SysfsPortSampler(std::string sysfs_root, double rediscover_after_s,
                                   HwCounterSelection hw)
    : root_(std::move(sysfs_root)), rediscover_after_s_(rediscover_after_s), hw_(std::move(hw)) {}

SysfsPortSampler::~SysfsPortSampler() {
  CloseAll();
  if (class_dir_ != nullptr) ::closedir(class_dir_);
}

void SysfsPortSampler::CloseAll() {
  for (const CounterFd& c : counters_) ::close(c.fd);
  for (int fd : absent_fds_) ::close(fd);
  absent_fds_.clear();
  for (const PortFds& p : ports_) {
    for (int fd : {p.state, p.phys_state, p.rate}) {
      if (fd >= 0) ::close(fd);
    }
  }
  counters_.clear();
  ports_.clear();
  fast_ = false;
}

void SysfsPortSampler::Discover(const char* reason) {
  CloseAll();
  // The device list first: a device that appears between the listing and the
  // walk shows up as a change at the next sample rather than being missed.
  devices_.clear();
  if (class_dir_ != nullptr) ::closedir(class_dir_);
  class_dir_ = nullptr;
  if (int fd = OpenDirAt(AT_FDCWD, (root_ + "/class/infiniband").c_str()); fd >= 0) {
    class_dir_ = ::fdopendir(fd);
    if (class_dir_ == nullptr) ::close(fd);
  }
  if (class_dir_ != nullptr) {
    while (const dirent* e = ::readdir(class_dir_)) {
      if (std::strcmp(e->d_name, ".") != 0 && std::strcmp(e->d_name, "..") != 0) {
        devices_.emplace_back(e->d_name);
      }
    }
  }
  host_ = ReadSysfsPorts(root_, hw_);
  ++stats_.full_reads;
  ++stats_.plans;
  discovered_at_ = MonotonicSeconds();

  SamplerPlan plan;
  plan.ports = host_.ports.size();
  auto finish = [&](std::string why) {
    plan.why = std::move(why);
    if (reason != nullptr) plan.why += std::string(" (planned after ") + reason + ")";
    const bool changed = plan.fast != plan_.fast || plan.ports != plan_.ports ||
                         plan.files != plan_.files || plan.hw_counters != plan_.hw_counters ||
                         plan.saturated != plan_.saturated || plan.widened != plan_.widened ||
                         stats_.plans == 1;
    plan_ = std::move(plan);
    if (changed && on_plan_change_) on_plan_change_(plan_);
  };
  // Problems (a port that vanished while read, an unreadable directory) are
  // the full walk's to report: walk again next sample until the tree is whole.
  if (!host_.problems.empty()) {
    const PortProblem& first = host_.problems.front();
    finish("fallback: a full sysfs walk every sample while the tree has problems (" + first.path +
           ": " + first.message + ")");
    return;
  }
  std::string failed;
  for (size_t i = 0; i < host_.ports.size() && failed.empty(); ++i) {
    PortSample& p = host_.ports[i];
    const std::string dir =
        root_ + "/class/infiniband/" + p.device + "/ports/" + std::to_string(p.port) + "/";
    auto open_kept = [&](const std::string& path) {
      int fd = OpenFile(path);
      if (fd >= 0) {
        ++stats_.opens;
        ++plan.files;
      }
      return fd;
    };
    PortFds fds{i};
    if (p.state && (fds.state = open_kept(dir + "state")) < 0) failed = dir + "state";
    if (p.phys_state && (fds.phys_state = open_kept(dir + "phys_state")) < 0) {
      failed = dir + "phys_state";
    }
    if (p.rate_text && (fds.rate = open_kept(dir + "rate")) < 0) failed = dir + "rate";
    if (auto it = p.counters.find("port_xmit_data"); it != p.counters.end()) {
      fds.xmit_words = &it->second;
    }
    if (auto it = p.counters.find("port_rcv_data"); it != p.counters.end()) {
      fds.rcv_words = &it->second;
    }
    fds.counters_begin = counters_.size();
    // As ReadPort judges saturation: the extended set (unicast_* present)
    // or a counters_ext/ 64-bit file makes the data/packet counters 64-bit.
    const bool extended_set =
        p.counters.contains("unicast_xmit_packets") || p.counters.contains("unicast_rcv_packets");
    for (auto& [key, value] : p.counters) {
      if (!failed.empty()) break;
      // Where ReadSysfsPorts took the value from: counters_ext's 64-bit
      // file when it exists, else counters/, else counters_ext/ by name.
      int fd = -1;
      for (const ExtName& x : kExtNames) {
        if (key == x.key) fd = open_kept(dir + "counters_ext/" + std::string(x.file));
      }
      const bool widened = fd >= 0;  // a 64-bit counters_ext/ file
      if (fd < 0) fd = open_kept(dir + "counters/" + key);
      if (fd < 0) fd = open_kept(dir + "counters_ext/" + key);
      if (fd < 0) {
        failed = dir + "counters/" + key;
        break;
      }
      // As FinishSysfsPort: every counter stops at 2^64-1, a legacy one at
      // its width's maximum.
      uint64_t saturates_at = kSysfsMax64;
      for (const LegacyCounter& c : kLegacyCounters) {
        if (key == c.name && !(c.data && (extended_set || widened))) saturates_at = c.max;
        if (key == c.name && c.data && widened) ++plan.widened;
      }
      const bool saturated = saturates_at != 0 && value == saturates_at;
      if (saturated) ++plan.saturated;
      counters_.push_back({fd, &value, saturates_at, &key, saturated});
    }
    for (auto& [key, value] : p.hw_counters) {
      if (!failed.empty()) break;
      int fd = open_kept(dir + "hw_counters/" + key);
      if (fd < 0) {
        failed = dir + "hw_counters/" + key;
        break;
      }
      ++plan.hw_counters;
      counters_.push_back({fd, &value, 0, &key, false});
    }
    fds.counters_end = counters_.size();
    ports_.push_back(fds);
    // Files listed but absent from the maps (N/A, unreadable): watched, so
    // that one which reads a number again makes a new plan at once.
    // hw_counters/ files the selection leaves out are not watched either.
    for (const char* sub : {"counters", "counters_ext", "hw_counters"}) {
      if (!failed.empty()) break;
      const bool hw = std::strcmp(sub, "hw_counters") == 0;
      if (hw && !hw_.ReadsAny()) continue;
      Dir d(OpenDirAt(AT_FDCWD, (dir + sub).c_str()));
      if (!d.ok()) continue;
      while (const dirent* e = d.Next()) {
        if (e->d_type == DT_DIR) continue;
        std::string key = e->d_name;
        if (std::strcmp(sub, "counters_ext") == 0) {
          for (const ExtName& x : kExtNames) {
            if (x.file == key) key = x.key;
          }
        }
        if (hw ? key == "lifespan" || !hw_.Wants(key) || p.hw_counters.contains(key)
               : p.counters.contains(key)) {
          continue;
        }
        int fd = open_kept(dir + sub + "/" + e->d_name);
        if (fd < 0) continue;
        absent_fds_.push_back(fd);
        if (hw) ++plan.hw_counters;
      }
    }
  }
  if (!failed.empty()) {
    CloseAll();
    plan.files = 0;
    plan.hw_counters = 0;
    finish("fallback: a full sysfs walk every sample: cannot keep " + failed + " open");
    return;
  }
  fast_ = true;
  plan.fast = true;
  finish("fast: one pread per value on kept file descriptors");
}

bool SysfsPortSampler::TreeUnchanged() {
  if (class_dir_ == nullptr) return false;
  ::rewinddir(class_dir_);
  size_t n = 0;
  while (const dirent* e = ::readdir(class_dir_)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    ++n;
    if (std::none_of(devices_.begin(), devices_.end(),
                     [&](const std::string& d) { return d == e->d_name; })) {
      return false;
    }
  }
  return n == devices_.size();
}

bool SysfsPortSampler::FastSample(const char** reason) {
  char buf[256];
  std::string_view v;
  *reason = "a read failed (ENODEV/ESTALE: driver reload or unplug) or a value changed form";
  auto pread_attr = [&](int fd) {
    ++stats_.preads;
    return PreadAttr(fd, buf, sizeof buf, &v);
  };
  // "4: ACTIVE" into its code and name; false when unreadable or of another form.
  auto read_state = [&](int fd, std::optional<int>* code, std::optional<std::string>* name_out) {
    if (!pread_attr(fd)) return false;
    size_t colon = v.find(':');
    std::string_view name = colon == std::string_view::npos ? v : v.substr(colon + 1);
    while (!name.empty() && name.front() == ' ') name.remove_prefix(1);
    int parsed = 0;
    if (colon == std::string_view::npos ||
        std::from_chars(v.data(), v.data() + colon, parsed).ec != std::errc() || name.empty()) {
      return false;
    }
    *code = parsed;
    SetIfChanged(name_out, name);
    return true;
  };
  for (const PortFds& fds : ports_) {
    PortSample& p = host_.ports[fds.index];
    if (fds.state >= 0 && !read_state(fds.state, &p.state_code, &p.state)) return false;
    if (fds.phys_state >= 0 && !read_state(fds.phys_state, &p.phys_state_code, &p.phys_state)) {
      return false;
    }
    if (fds.rate >= 0) {
      if (!pread_attr(fds.rate) || v.empty()) return false;
      if (!p.rate_text || *p.rate_text != v) {
        p.rate_text = std::string(v);
        p.rate_gbps = ParseRateGbps(v);
      }
    }
  }
  for (const PortFds& fds : ports_) {
    bool saturation_changed = false;
    for (size_t k = fds.counters_begin; k < fds.counters_end; ++k) {
      CounterFd& c = counters_[k];
      if (!pread_attr(c.fd)) return false;
      std::optional<uint64_t> value = ParseU64(v);
      // Absent now ("N/A"): the counter leaves the maps, a new plan.
      if (!value) return false;
      *c.value = *value;
      // A legacy counter at its maximum stays on this path: only its
      // port's saturated list changes, and only when the set does.
      const bool saturated = c.saturates_at != 0 && *value == c.saturates_at;
      if (saturated != c.saturated) {
        c.saturated = saturated;
        saturation_changed = true;
        if (saturated) {
          ++plan_.saturated;
        } else {
          --plan_.saturated;
        }
      }
    }
    if (saturation_changed) {
      std::vector<std::string>& list = host_.ports[fds.index].saturated;
      list.clear();
      // The maps iterate in key order, so the list comes out sorted.
      for (size_t k = fds.counters_begin; k < fds.counters_end; ++k) {
        if (counters_[k].saturated) list.push_back(*counters_[k].key);
      }
    }
  }
  for (int fd : absent_fds_) {
    if (pread_attr(fd) && ParseU64(v)) {
      *reason = "an absent counter (N/A, unreadable) reads a number again";
      return false;
    }
  }
  // The data counters count 4-octet words.
  auto bytes = [](const uint64_t* words) -> std::optional<uint64_t> {
    if (!words || *words > std::numeric_limits<uint64_t>::max() / 4) return std::nullopt;
    return *words * 4;
  };
  for (const PortFds& fds : ports_) {
    PortSample& p = host_.ports[fds.index];
    p.xmit_bytes = bytes(fds.xmit_words);
    p.rcv_bytes = bytes(fds.rcv_words);
  }
  return true;
}

const HostPorts& SysfsPortSampler::Sample() {
  if (!fast_) {
    Discover(stats_.plans == 0 ? nullptr : "the last plan was a full walk");
  } else if (MonotonicSeconds() - discovered_at_ >= rediscover_after_s_) {
    Discover("the periodic re-check");
  } else if (!TreeUnchanged()) {
    Discover("a device appeared in or left class/infiniband");
  } else if (const char* reason = nullptr; !FastSample(&reason)) {
    Discover(reason);
  }
  return host_;
}

std::string DescribePlan(const SamplerPlan& plan) {
  std::string s = "sampler " + plan.why + "; " + std::to_string(plan.ports) + " port(s)";
  if (plan.fast) {
    s += ", " + std::to_string(plan.files) + " file(s) per sample (" +
         std::to_string(plan.hw_counters) + " of them hw_counters), " +
         std::to_string(plan.saturated) +
         " saturated legacy counter(s) without a 64-bit source (read on the fast path, reported "
         "saturated), " +
         std::to_string(plan.widened) + " legacy counter(s) read from counters_ext 64-bit files";
  }
  return s;
}

std::optional<std::string> KernelRelease() {
  struct utsname name {};
  if (uname(&name) != 0) return std::nullopt;
  return std::string(name.release);
}

}  // namespace fabtrack
