#include "collector/counters/ethtool_stats.h"

#include <linux/ethtool.h>
#include <linux/sockios.h>
#include <net/if.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <optional>
#include <sstream>
#include <vector>

#include "collector/parse/port_dump_parser.h"

namespace fabtrack {
namespace {

class Socket {
 public:
  Socket() : fd_(socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0)) {}
  ~Socket() {
    if (fd_ >= 0) close(fd_);
  }
  int fd() const { return fd_; }

 private:
  int fd_;
};

bool Ioctl(int fd, const std::string& netdev, void* data, std::string* error) {
  ifreq request{};
  std::strncpy(request.ifr_name, netdev.c_str(), IFNAMSIZ - 1);
  request.ifr_data = static_cast<char*>(data);
  if (ioctl(fd, SIOCETHTOOL, &request) != 0) {
    *error = netdev + ": " + std::strerror(errno);
    return false;
  }
  return true;
}

}  // namespace

EthtoolStats ReadEthtoolStats(const std::string& netdev) {
  EthtoolStats stats;
  if (netdev.empty() || netdev.size() >= IFNAMSIZ) {
    stats.error = "bad interface name '" + netdev + "'";
    return stats;
  }
  Socket sock;
  if (sock.fd() < 0) {
    stats.error = std::string("socket: ") + std::strerror(errno);
    return stats;
  }
  // How many statistics the driver has.
  // ethtool_sset_info ends in a flexible array: one u32 per set asked for.
  std::vector<char> sset_buf(sizeof(ethtool_sset_info) + sizeof(uint32_t));
  auto* sset = reinterpret_cast<ethtool_sset_info*>(sset_buf.data());
  sset->cmd = ETHTOOL_GSSET_INFO;
  sset->sset_mask = 1ULL << ETH_SS_STATS;
  if (!Ioctl(sock.fd(), netdev, sset, &stats.error)) return stats;
  const uint32_t n = sset->sset_mask ? sset->data[0] : 0;
  if (n == 0) {
    stats.error = netdev + ": the driver reports no statistics";
    return stats;
  }
  std::vector<char> strings_buf(sizeof(ethtool_gstrings) + n * ETH_GSTRING_LEN);
  auto* strings = reinterpret_cast<ethtool_gstrings*>(strings_buf.data());
  strings->cmd = ETHTOOL_GSTRINGS;
  strings->string_set = ETH_SS_STATS;
  strings->len = n;
  if (!Ioctl(sock.fd(), netdev, strings, &stats.error)) return stats;
  std::vector<char> values_buf(sizeof(ethtool_stats) + n * sizeof(uint64_t));
  auto* values = reinterpret_cast<ethtool_stats*>(values_buf.data());
  values->cmd = ETHTOOL_GSTATS;
  values->n_stats = n;
  if (!Ioctl(sock.fd(), netdev, values, &stats.error)) return stats;
  const uint32_t got = std::min(n, std::min(strings->len, values->n_stats));
  for (uint32_t i = 0; i < got; ++i) {
    const char* name = reinterpret_cast<const char*>(strings->data) + i * ETH_GSTRING_LEN;
    stats.values[std::string(name, strnlen(name, ETH_GSTRING_LEN))] = values->data[i];
  }
  return stats;
}

EthtoolStats ReadEthtoolDump(const std::string& dir, const std::string& netdev) {
  EthtoolStats out;
  const std::string path = dir + "/" + netdev;
  std::ifstream in(path);
  if (!in) {
    out.error = path + ": no ethtool -S dump for this netdev";
    return out;
  }
  std::stringstream text;
  text << in.rdbuf();
  std::vector<PortDumpError> errors;
  std::optional<std::map<std::string, uint64_t>> values =
      ParseEthtoolStatistics(text.str(), &errors, &out.error);
  if (!values) {
    out.error = path + ":1: " + out.error;
    return out;
  }
  if (!errors.empty()) {
    out.error = path + ":" + std::to_string(errors.front().line) + ": " + errors.front().message;
  }
  out.values = std::move(*values);
  return out;
}

}  // namespace fabtrack
