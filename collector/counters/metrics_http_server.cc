#include "collector/counters/metrics_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <stdexcept>

namespace fabtrack {
namespace {

constexpr int kListenBacklog = 128;
constexpr std::string_view kExpositionType = "text/plain; version=0.0.4; charset=utf-8";
constexpr std::string_view kLandingPage =
    "<html><head><title>fabtrack port exporter</title></head><body>"
    "<h1>fabtrack port exporter</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";

// The complete error answers: status line, headers and body.
constexpr std::string_view kBadRequest =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 12\r\n"
    "Connection: close\r\n\r\nbad request\n";
constexpr std::string_view kNotFound =
    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
    "Connection: close\r\n\r\nnot found\n";
constexpr std::string_view kNotFoundHead =
    "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 10\r\n"
    "Connection: close\r\n\r\n";
constexpr std::string_view kMethodNotAllowed =
    "HTTP/1.1 405 Method Not Allowed\r\nAllow: GET, HEAD\r\nContent-Type: text/plain\r\n"
    "Content-Length: 18\r\nConnection: close\r\n\r\nonly GET and HEAD\n";
constexpr std::string_view kTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\n"
    "Content-Length: 31\r\nConnection: close\r\n\r\nrequest header fields too large";

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The request's path, query string dropped ("/metrics?x=1" is /metrics).
std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

}  // namespace

ListenAddress ParseListenAddress(const std::string& text) {
  auto bad = [&](const char* why) {
    return std::invalid_argument("listen address \"" + text + "\": " + why +
                                 " (expected HOST:PORT, [IPV6]:PORT or :PORT)");
  };
  ListenAddress a;
  std::string_view s = text;
  if (IsDigits(s)) {
    a.port = text;
  } else if (!s.empty() && s.front() == '[') {
    size_t close = s.find(']');
    if (close == std::string_view::npos || close + 1 >= s.size() || s[close + 1] != ':') {
      throw bad("an IPv6 address in brackets needs :PORT after it");
    }
    a.host = std::string(s.substr(1, close - 1));
    a.port = std::string(s.substr(close + 2));
  } else {
    size_t colon = s.rfind(':');
    if (colon == std::string_view::npos) throw bad("no port");
    if (s.substr(0, colon).find(':') != std::string_view::npos) {
      throw bad("an IPv6 address needs brackets");
    }
    a.host = std::string(s.substr(0, colon));
    a.port = std::string(s.substr(colon + 1));
  }
  unsigned port = 0;
  auto [end, ec] = std::from_chars(a.port.data(), a.port.data() + a.port.size(), port);
  if (!IsDigits(a.port) || ec != std::errc() || end != a.port.data() + a.port.size() ||
      port > 65535) {
    throw bad("the port is not a number from 0 to 65535");
  }
  return a;
}

HttpRequestDecision DecideHttpRequest(std::string_view received, size_t max_request_bytes) {
  using Action = HttpRequestDecision::Action;
  using Route = HttpRequestDecision::Route;
  HttpRequestDecision d;
  // The request line and headers end at the first empty line, its line
  // endings CRLF or a lone LF (RFC 9112 section 2.2 lets a server accept
  // both); a GET has no body.
  const size_t blank = received.find("\n\r\n");
  const size_t lone = received.find("\n\n");
  size_t end = std::string_view::npos;  // just after the empty line
  if (blank != std::string_view::npos) end = blank + 3;
  if (lone != std::string_view::npos && (end == std::string_view::npos || lone + 2 < end)) {
    end = lone + 2;
  }
  if (end == std::string_view::npos) {
    if (received.size() < max_request_bytes) return d;  // kNeedMore
    d.action = Action::kRespond;
    d.route = Route::kError;
    d.status = 431;
    d.error_response = kTooLarge;
    return d;
  }
  d.action = Action::kRespond;
  d.request_bytes = end;
  auto error = [&d](int status, std::string_view response) {
    d.route = Route::kError;
    d.status = status;
    d.error_response = response;
    return d;
  };
  const std::string_view request = received.substr(0, end);
  std::string_view line = request.substr(0, request.find('\n'));
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  const size_t first_space = line.find(' ');
  const size_t second_space =
      first_space == std::string_view::npos ? first_space : line.find(' ', first_space + 1);
  if (second_space == std::string_view::npos ||
      line.substr(second_space + 1).rfind("HTTP/1.", 0) != 0) {
    return error(400, kBadRequest);
  }
  const std::string_view method = line.substr(0, first_space);
  const std::string_view path =
      PathOf(line.substr(first_space + 1, second_space - first_space - 1));
  d.head_only = method == "HEAD";
  if (path != "/metrics" && path != "/") {
    return error(404, d.head_only ? kNotFoundHead : kNotFound);
  }
  if (!d.head_only && method != "GET") return error(405, kMethodNotAllowed);
  d.status = 200;
  d.route = path == "/" ? Route::kLanding : Route::kMetrics;
  return d;
}

void WriteOkHead(const HttpRequestDecision& decision, size_t body_size, std::string* out) {
  out->assign("HTTP/1.1 200 OK\r\nContent-Type: ");
  out->append(decision.route == HttpRequestDecision::Route::kLanding ? "text/html; charset=utf-8"
                                                                     : kExpositionType);
  out->append("\r\nContent-Length: ");
  char digits[24];
  auto [end, ec] = std::to_chars(digits, digits + sizeof digits, body_size);
  out->append(digits, end);
  out->append("\r\nConnection: close\r\n\r\n");
}

MetricsHttpServer::MetricsHttpServer(const std::string& listen, Render render, Limits limits)
    : render_(std::move(render)), limits_(limits) {
  auto fail = [&](const std::string& why) {
    return std::runtime_error("cannot listen on " + listen + ": " + why);
  };
  ListenAddress address;
  try {
    address = ParseListenAddress(listen);
  } catch (const std::invalid_argument& e) {
    throw fail(e.what());
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
  addrinfo* found = nullptr;
  if (int rc = ::getaddrinfo(address.host.empty() ? nullptr : address.host.c_str(),
                             address.port.c_str(), &hints, &found);
      rc != 0) {
    throw fail(::gai_strerror(rc));
  }
  std::string last_error = "no address";
  for (addrinfo* ai = found; ai != nullptr && listen_fd_ < 0; ai = ai->ai_next) {
    int fd =
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol);
    if (fd < 0) {
      last_error = std::strerror(errno);
      continue;
    }
    // A restarted exporter can listen again while the last one's
    // connections sit in TIME_WAIT; a live listener still refuses the bind.
    int on = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
    if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, kListenBacklog) != 0) {
      last_error = std::strerror(errno);
      ::close(fd);
      continue;
    }
    listen_fd_ = fd;
  }
  ::freeaddrinfo(found);
  if (listen_fd_ < 0) throw fail(last_error);
  connections_.resize(static_cast<size_t>(std::max(1, limits_.max_connections)));
  for (Connection& c : connections_) c.request.reserve(limits_.max_request_bytes);
}

MetricsHttpServer::~MetricsHttpServer() {
  for (Connection& c : connections_) Close(c);
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

void MetricsHttpServer::Serve(const std::function<bool()>& should_stop) {
  std::vector<pollfd> polled;
  std::vector<Connection*> polled_connection;  // polled[i + 1]'s connection
  polled.reserve(connections_.size() + 1);
  polled_connection.reserve(connections_.size());
  while (!should_stop()) {
    polled.clear();
    polled_connection.clear();
    // A free slot, or one still waiting for its request (Accept displaces
    // it); with every slot sending an answer, new clients wait in the listen
    // backlog.
    const bool room =
        std::any_of(connections_.begin(), connections_.end(),
                    [](const Connection& c) { return c.fd < 0 || c.pending.empty(); });
    polled.push_back({listen_fd_, static_cast<short>(room ? POLLIN : 0), 0});
    auto now = std::chrono::steady_clock::now();
    auto wait = std::chrono::milliseconds(100);
    for (Connection& c : connections_) {
      if (c.fd < 0) continue;
      polled.push_back({c.fd, static_cast<short>(c.pending.empty() ? POLLIN : POLLOUT), 0});
      polled_connection.push_back(&c);
      wait = std::min(wait, std::chrono::duration_cast<std::chrono::milliseconds>(std::max(
                                c.deadline - now, std::chrono::steady_clock::duration(0))));
    }
    int ready = ::poll(polled.data(), polled.size(), static_cast<int>(wait.count()));
    if (ready < 0) {
      if (errno == EINTR) continue;  // a signal: should_stop() decides
      throw std::runtime_error(std::string("poll: ") + std::strerror(errno));
    }
    for (size_t i = 1; i < polled.size(); ++i) {
      Connection& c = *polled_connection[i - 1];
      if (polled[i].revents == 0) continue;
      if (!c.pending.empty()) {
        FlushPending(c);
      } else {
        ReadRequest(c);
      }
    }
    if (polled[0].revents & POLLIN) Accept();
    now = std::chrono::steady_clock::now();
    for (Connection& c : connections_) {
      if (c.fd >= 0 && now >= c.deadline) Close(c);  // idle, slow or stuck
    }
  }
}

void MetricsHttpServer::Accept() {
  // At most one listen backlog's worth per round, so that a steady stream of
  // connections cannot keep the loop here.
  for (int i = 0; i < kListenBacklog; ++i) {
    Connection* slot = nullptr;
    for (Connection& c : connections_) {
      if (c.fd < 0) {
        slot = &c;
        break;
      }
      if (c.pending.empty() && (slot == nullptr || c.deadline < slot->deadline)) slot = &c;
    }
    if (slot == nullptr) return;  // every slot is sending an answer: the rest wait
    int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN: no one else waiting; EMFILE and the like: next round
    // With every slot taken, the client that has had longest to send its
    // request and has not gives way: connections that say nothing (a flood,
    // a port scan, a stuck client) cannot keep a scrape waiting for their
    // deadlines. Connections being answered are never displaced.
    Close(*slot);
    Connection& c = *slot;
    c.fd = fd;
    c.request.clear();
    c.pending.clear();
    c.pending_offset = 0;
    c.deadline = std::chrono::steady_clock::now() + limits_.deadline;
    // A scraper's request usually arrives with its connection: answer it
    // before a later connection could displace this one.
    ReadRequest(c);
  }
}

void MetricsHttpServer::ReadRequest(Connection& c) {
  char buf[4096];
  for (;;) {
    ssize_t n = ::recv(c.fd, buf, sizeof buf, 0);
    if (n == 0) return Close(c);  // the client went away before asking
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return Close(c);
    }
    const size_t room = limits_.max_request_bytes - c.request.size();
    c.request.append(buf, std::min(static_cast<size_t>(n), room));
    const HttpRequestDecision decision = DecideHttpRequest(c.request, limits_.max_request_bytes);
    if (decision.action == HttpRequestDecision::Action::kRespond) return Answer(c, decision);
  }
}

void MetricsHttpServer::Answer(Connection& c, const HttpRequestDecision& decision) {
  if (decision.route == HttpRequestDecision::Route::kError) {
    return Send(c, decision.error_response, {});
  }
  const std::string_view body = decision.route == HttpRequestDecision::Route::kLanding
                                    ? kLandingPage
                                    : std::string_view(render_());
  WriteOkHead(decision, body.size(), &head_);
  // HEAD announces the length GET would send, and sends nothing after it.
  Send(c, head_, decision.head_only ? std::string_view() : body);
}

void MetricsHttpServer::Send(Connection& c, std::string_view head, std::string_view body) {
  // Headers and body in one call: on loopback each send is a trip through
  // the TCP stack.
  iovec parts[2] = {{const_cast<char*>(head.data()), head.size()},
                    {const_cast<char*>(body.data()), body.size()}};
  msghdr message{};
  message.msg_iov = parts;
  message.msg_iovlen = body.empty() ? 1 : 2;
  ssize_t sent;
  do {
    sent = ::sendmsg(c.fd, &message, MSG_NOSIGNAL);
  } while (sent < 0 && errno == EINTR);
  if (sent < 0 && errno != EAGAIN && errno != EWOULDBLOCK) return Close(c);
  const size_t done = sent < 0 ? 0 : static_cast<size_t>(sent);
  if (done == head.size() + body.size()) return Close(c);
  // The socket buffer is full (a slow reader or a large host): keep the
  // rest for this connection and send it as the socket drains.
  c.pending.clear();
  c.pending_offset = 0;
  if (done < head.size()) {
    c.pending.append(head.substr(done));
    c.pending.append(body);
  } else {
    c.pending.append(body.substr(done - head.size()));
  }
}

void MetricsHttpServer::FlushPending(Connection& c) {
  while (c.pending_offset < c.pending.size()) {
    ssize_t sent = ::send(c.fd, c.pending.data() + c.pending_offset,
                          c.pending.size() - c.pending_offset, MSG_NOSIGNAL);
    if (sent < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      return Close(c);
    }
    c.pending_offset += static_cast<size_t>(sent);
  }
  Close(c);
}

void MetricsHttpServer::Close(Connection& c) {
  if (c.fd < 0) return;
  // Whatever the client sent after its headers is read and dropped first:
  // closing with unread bytes makes the kernel answer with a reset, which
  // can cost the client the answer it has not read yet.
  // Bounded: a client that keeps sending does not keep the server here.
  char drain[1024];
  for (int i = 0; i < 64 && ::recv(c.fd, drain, sizeof drain, MSG_DONTWAIT) > 0; ++i) {
  }
  ::close(c.fd);
  c.fd = -1;
  c.pending.clear();
  c.pending_offset = 0;
}

}  // namespace fabtrack
