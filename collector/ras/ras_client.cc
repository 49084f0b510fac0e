// Sockets for ras_client.h. Every wait is a poll() against one deadline, so
// a RAS thread that accepts and then says nothing (a stopped process, a
// wedged job) costs at most the deadline, never a hang.
#include "collector/ras/ras_client.h"

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

class Connection {
 public:
  Connection(const QueryOptions& o)
      : where_(o.host + ":" + std::to_string(o.port)),
        deadline_(Clock::now() + std::chrono::milliseconds(
                                     static_cast<int64_t>(std::llround(o.deadline_s * 1000)))),
        deadline_s_(o.deadline_s),
        cap_(o.max_reply_bytes) {}
  ~Connection() {
    if (fd_ >= 0) close(fd_);
  }
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  void Connect(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    int rc = getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found);
    if (rc != 0) Fail(std::string("cannot resolve the host: ") + gai_strerror(rc));
    std::string last_error = "no address";
    for (addrinfo* a = found; a; a = a->ai_next) {
      int fd = socket(a->ai_family, a->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, a->ai_protocol);
      if (fd < 0) continue;
      int r = connect(fd, a->ai_addr, a->ai_addrlen);
      if (r != 0 && errno == EINPROGRESS) {
        if (Wait(fd, POLLOUT)) {
          int err = 0;
          socklen_t len = sizeof(err);
          getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len);
          r = err == 0 ? 0 : -1;
          errno = err;
        } else {
          errno = ETIMEDOUT;
        }
      }
      if (r == 0) {
        fd_ = fd;
        break;
      }
      last_error = std::strerror(errno);
      close(fd);
      if (Clock::now() >= deadline_) break;
    }
    freeaddrinfo(found);
    if (fd_ < 0) {
      Fail("cannot connect (" + last_error +
           "): is an NCCL >= 2.24 job running there with RAS enabled (NCCL_RAS_ENABLE, "
           "NCCL_RAS_ADDR)?");
    }
  }

  void Send(const std::string& line) {
    size_t sent = 0;
    while (sent < line.size()) {
      ssize_t n = send(fd_, line.data() + sent, line.size() - sent, MSG_NOSIGNAL);
      if (n > 0) {
        sent += static_cast<size_t>(n);
      } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
        if (!Wait(fd_, POLLOUT)) Stalled("sending " + Visible(line));
      } else {
        Fail("cannot send " + Visible(line) + ": " + std::strerror(errno));
      }
    }
  }

  // One line of the handshake, without its newline.
  std::string ReadLine(const std::string& after) {
    for (;;) {
      size_t nl = buffer_.find('\n');
      if (nl != std::string::npos) {
        std::string line = buffer_.substr(0, nl);
        buffer_.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        return line;
      }
      if (buffer_.size() > 4096) Fail("no line break in the answer to " + after);
      if (!Receive()) Fail("the server closed the connection without answering " + after);
    }
  }

  // Everything until the server closes.
  std::string ReadToClose() {
    while (Receive()) {
    }
    return std::move(buffer_);
  }

 private:
  // Reads once; false at the server's close.
  bool Receive() {
    char chunk[65536];
    for (;;) {
      ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
      if (n > 0) {
        if (buffer_.size() + static_cast<size_t>(n) > cap_) {
          Fail("the reply passed " + std::to_string(cap_) +
               " bytes and was cut off there (not read further)");
        }
        buffer_.append(chunk, static_cast<size_t>(n));
        return true;
      }
      if (n == 0) return false;
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) {
        Fail(std::string("cannot receive: ") + std::strerror(errno));
      }
      if (!Wait(fd_, POLLIN)) {
        Stalled(buffer_.empty() ? "waiting for the reply"
                                : "mid-reply, after " + std::to_string(buffer_.size()) + " bytes");
      }
    }
  }

  // Polls until `events` or the deadline; false at the deadline.
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

  static std::string Visible(std::string line) {
    while (!line.empty() && line.back() == '\n') line.pop_back();
    return "\"" + line + "\"";
  }

  [[noreturn]] void Stalled(const std::string& when) {
    char s[32];
    std::snprintf(s, sizeof(s), "%g", deadline_s_);
    Fail(std::string("no answer within the deadline of ") + s + " s (" + when +
         "): the peer stalled");
  }

  [[noreturn]] void Fail(const std::string& what) {
    throw QueryError("RAS at " + where_ + ": " + what);
  }

  std::string where_;
  Clock::time_point deadline_;
  double deadline_s_;
  size_t cap_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace

Reply Query(const QueryOptions& o) {
  Connection c(o);
  c.Connect(o.host, o.port);
  Reply reply;
  c.Send("CLIENT PROTOCOL 2\n");
  std::string hello = c.ReadLine("CLIENT PROTOCOL");
  const std::string kServer = "SERVER PROTOCOL ";
  if (hello.compare(0, kServer.size(), kServer) != 0) {
    throw QueryError("RAS at " + o.host + ":" + std::to_string(o.port) +
                     ": not a RAS server (answered \"" + hello.substr(0, 80) +
                     "\" to CLIENT PROTOCOL)");
  }
  reply.server_protocol = hello.substr(kServer.size());
  if (o.gather_timeout_s > 0) {
    c.Send("TIMEOUT " + std::to_string(o.gather_timeout_s) + "\n");
    std::string ok = c.ReadLine("TIMEOUT");
    if (ok != "OK") {
      throw QueryError("RAS at " + o.host + ":" + std::to_string(o.port) +
                       ": refused TIMEOUT: " + ok.substr(0, 80));
    }
  }
  reply.format = "text";
  if (o.json) {
    c.Send("SET FORMAT json\n");
    std::string ok = c.ReadLine("SET FORMAT");
    if (ok == "OK") {
      reply.format = "json";
    } else {
      // Before 2.28.7: "ERROR: Unknown command set format json"; the text report it is.
      reply.format_refusal = ok.substr(0, 200);
    }
  }
  c.Send(o.verbose ? "VERBOSE STATUS\n" : "STATUS\n");
  reply.body = c.ReadToClose();
  if (reply.body.empty()) {
    throw QueryError("RAS at " + o.host + ":" + std::to_string(o.port) +
                     ": the server closed the connection without a report");
  }
  return reply;
}

std::optional<std::string> LookUpHost(const std::string& address) {
  addrinfo hints{};
  hints.ai_flags = AI_NUMERICHOST;
  hints.ai_family = AF_UNSPEC;
  addrinfo* found = nullptr;
  if (getaddrinfo(address.c_str(), nullptr, &hints, &found) != 0) {
    // Not an address: RAS printed a name.
    if (address.empty()) return std::nullopt;
    return address.substr(0, address.find('.'));
  }
  char name[NI_MAXHOST] = {0};
  int rc =
      getnameinfo(found->ai_addr, found->ai_addrlen, name, sizeof(name), nullptr, 0, NI_NAMEREQD);
  freeaddrinfo(found);
  if (rc != 0) return std::nullopt;
  std::string host = name;
  return host.substr(0, host.find('.'));
}

}  // namespace fabtrack::ras
