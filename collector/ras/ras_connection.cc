#include "collector/ras/ras_connection.h"

#include <netdb.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace fabtrack::ras {
namespace {

// Past this a reply is a big job's report (JSON from ~60,000 ranks).
constexpr size_t kBigReply = size_t{32} << 20;

std::string Visible(std::string line) {
  while (!line.empty() && line.back() == '\n') line.pop_back();
  return "\"" + line + "\"";
}

}  // namespace

RasConnection::RasConnection(const QueryOptions& o, const std::string& label,
                             std::string connect_hint)
    : where_("RAS at " + o.host + ":" + std::to_string(o.port) + label + ": "),
      connect_hint_(std::move(connect_hint)),
      deadline_(Clock::now() +
                std::chrono::milliseconds(static_cast<int64_t>(std::llround(o.deadline_s * 1000)))),
      deadline_s_(o.deadline_s),
      cap_(o.max_reply_bytes) {}

RasConnection::~RasConnection() {
  if (fd_ >= 0) close(fd_);
}

void RasConnection::Connect(const std::string& host, int port) {
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
  if (fd_ < 0) Fail("cannot connect (" + last_error + ")" + connect_hint_);
}

void RasConnection::Send(const std::string& line) {
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

std::string RasConnection::ReadLine(const std::string& after) {
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

std::string RasConnection::ReadToClose() {
  while (Receive()) {
  }
  return std::move(buffer_);
}

int RasConnection::Release() {
  int fd = fd_;
  fd_ = -1;
  return fd;
}

// Reads once; false at the server's close.
bool RasConnection::Receive() {
  char chunk[65536];
  for (;;) {
    ssize_t n = recv(fd_, chunk, sizeof(chunk), 0);
    if (n > 0) {
      if (buffer_.size() + static_cast<size_t>(n) > cap_) {
        Fail("the reply passed " + std::to_string(cap_) +
             " bytes and was cut off there (not read further)");
      }
      if (buffer_.size() + static_cast<size_t>(n) > buffer_.capacity() &&
          buffer_.size() >= kBigReply && buffer_.capacity() < cap_) {
        // A big job's report: room for the whole cap, reserved once
        // (address space; memory only as it fills). Grown by doubling
        // instead, a reply near the cap would hold its old and new copies
        // at once: twice the cap, resident.
        buffer_.reserve(cap_);
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
bool RasConnection::Wait(int fd, short events) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline_ - Clock::now());
    if (left.count() <= 0) return false;
    pollfd p{fd, events, 0};
    int r = poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 60000)));
    if (r > 0) return true;
    if (r < 0 && errno != EINTR) return false;
  }
}

void RasConnection::Stalled(const std::string& when) {
  char s[32];
  std::snprintf(s, sizeof(s), "%g", deadline_s_);
  Fail(std::string("no answer within the deadline of ") + s + " s (" + when +
       "): the peer stalled");
}

void RasConnection::Fail(const std::string& what) { throw QueryError(where_ + what); }

}  // namespace fabtrack::ras
