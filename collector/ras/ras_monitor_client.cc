// The event stream of ras_monitor_client.h: the handshake over a
// RasConnection (its deadline), then the stream's socket read with the
// caller's timeout.
#include "collector/ras/ras_monitor_client.h"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

#include "collector/ras/ras_connection.h"

namespace fabtrack::ras {

std::unique_ptr<MonitorConnection> MonitorConnection::Open(const QueryOptions& o,
                                                           const std::string& groups,
                                                           Opening* opening) {
  RasConnection h(o, " (event stream)", "");
  h.Connect(o.host, o.port);
  h.Send("CLIENT PROTOCOL 2\n");
  std::string hello = h.ReadLine("CLIENT PROTOCOL");
  if (hello.rfind("SERVER PROTOCOL ", 0) != 0) {
    h.Fail("not a RAS server (answered \"" + hello.substr(0, 80) + "\" to CLIENT PROTOCOL)");
  }
  // JSON where offered (2.28.7+, so every server that streams events):
  // its objects carry the group and the GPUs as numbers.
  h.Send("SET FORMAT json\n");
  opening->format = h.ReadLine("SET FORMAT") == "OK" ? "json" : "text";
  h.Send("MONITOR " + groups + "\n");
  std::string answer = h.ReadLine("MONITOR");
  if (answer != "OK") {
    opening->supported = false;
    opening->refusal = answer.substr(0, 200);
    return nullptr;
  }
  opening->supported = true;
  std::string early = h.TakeBuffered();
  int fd = h.Release();
  return std::unique_ptr<MonitorConnection>(new MonitorConnection(fd, std::move(early)));
}

MonitorConnection::~MonitorConnection() {
  if (fd_ >= 0) close(fd_);
}

MonitorConnection::Got MonitorConnection::Read(int timeout_ms, std::string* data) {
  if (!early_.empty()) {
    data->append(early_);
    early_.clear();
    return Got::kData;
  }
  if (fd_ < 0) return Got::kClosed;
  pollfd p{fd_, POLLIN, 0};
  int r = poll(&p, 1, std::max(0, timeout_ms));
  if (r == 0 || (r < 0 && errno == EINTR)) return Got::kQuiet;
  char chunk[65536];
  for (;;) {
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      data->append(chunk, static_cast<size_t>(n));
      return Got::kData;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return Got::kQuiet;
    close(fd_);
    fd_ = -1;
    return Got::kClosed;
  }
}

}  // namespace fabtrack::ras
