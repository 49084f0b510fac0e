// Sockets for ras_monitor_client.h: non-blocking, every wait a poll()
// bounded by the handshake's deadline or the caller's timeout.
#include "collector/ras/ras_monitor_client.h"

#include <fcntl.h>
#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>

namespace fabtrack::ras {
namespace {

using Clock = std::chrono::steady_clock;

// The handshake: connect, send, read answer lines, within one deadline.
class Handshake {
 public:
  explicit Handshake(const QueryOptions& o)
      : where_("RAS at " + o.host + ":" + std::to_string(o.port) + " (event stream): "),
        deadline_(Clock::now() + std::chrono::milliseconds(
                                     static_cast<int64_t>(std::llround(o.deadline_s * 1000)))) {}
  ~Handshake() {
    if (fd_ >= 0) close(fd_);
  }

  void Connect(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) Fail(std::string("cannot resolve the host: ") + gai_strerror(rc));
    std::string last_error = "no address";
    for (addrinfo* a = found; a && fd_ < 0; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int r = connect(fd, a->ai_addr, a->ai_addrlen);
      if (r != 0 && errno == EINPROGRESS) {
        errno = ETIMEDOUT;
        if (Wait(fd, POLLOUT)) {
          int err = 0;
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          r = err == 0 ? 0 : -1;
          errno = err;
        }
      }
      if (r == 0) {
        fd_ = fd;
      } else {
        last_error = std::strerror(errno);
        close(fd);
      }
    }
    freeaddrinfo(found);
    if (fd_ < 0) Fail("cannot connect (" + last_error + ")");
  }

  void Send(const std::string& line) {
    size_t sent = 0;
    while (sent < line.size()) {
      ssize_t n = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (!Wait(fd_, POLLOUT)) Fail("no progress sending within the deadline: the peer stalled");
      } else {
        Fail(std::string("cannot send: ") + std::strerror(errno));
      }
    }
  }

  std::string ReadLine(const char* after) {
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buffer_.size() > 4096) Fail(std::string("no line break in the answer to ") + after);
      char chunk[4096];
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        buffer_.append(chunk, static_cast<size_t>(n));
      } else if (n == 0) {
        Fail(std::string("the server closed the connection without answering ") + after);
      } else if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK) {
        Fail(std::string("cannot receive: ") + std::strerror(errno));
      } else if (errno != EINTR && !Wait(fd_, POLLIN)) {
        Fail(std::string("no answer to ") + after + " within the deadline: the peer stalled");
      }
    }
  }

  int Release() {
    int fd = fd_;
    fd_ = -1;
    return fd;
  }
  std::string Rest() { return std::move(buffer_); }

  [[noreturn]] void Fail(const std::string& what) { throw QueryError(where_ + what); }

 private:
  bool Wait(int fd, short events) {
    for (;;) {
      auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd, events, 0};
      int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
      if (r > 0) return true;
      if (r < 0 && errno != EINTR) return false;
    }
  }

  std::string where_;
  Clock::time_point deadline_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

std::unique_ptr<MonitorConnection> MonitorConnection::Open(const QueryOptions& o,
                                                           const std::string& groups,
                                                           Opening* opening) {
  Handshake h(o);
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
  std::string early = h.Rest();
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
