#include "collector/counters/metrics_http_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <climits>
#include <csignal>
#include <cstring>
#include <optional>
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
constexpr std::string_view kUnauthorized =
    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\nContent-Type: text/plain\r\n"
    "Content-Length: 13\r\nConnection: close\r\n\r\nUnauthorized\n";
constexpr std::string_view kUnauthorizedHead =
    "HTTP/1.1 401 Unauthorized\r\nWWW-Authenticate: Basic\r\nContent-Type: text/plain\r\n"
    "Content-Length: 13\r\nConnection: close\r\n\r\n";
// Plain HTTP to the TLS port, answered in plain text as Go's servers do: the
// operator sees why instead of a reset.
constexpr std::string_view kHttpToHttps =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 48\r\n"
    "Connection: close\r\n\r\nClient sent an HTTP request to an HTTPS server.\n";
constexpr std::string_view kTooLarge =
    "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Type: text/plain\r\n"
    "Content-Length: 31\r\nConnection: close\r\n\r\nrequest header fields too large";

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// The request's path, query string dropped ("/metrics?x=1" is /metrics).
std::string_view PathOf(std::string_view target) { return target.substr(0, target.find('?')); }

bool EqualsIgnoringCase(std::string_view a, std::string_view b) {
  auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c + 32) : c; };
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [&](char x, char y) { return lower(x) == lower(y); });
}

std::string_view TrimSpaces(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The value of the first header `name` in `headers` (the lines after the
// request line), or nothing.
std::optional<std::string_view> HeaderValue(std::string_view headers, std::string_view name) {
  while (!headers.empty()) {
    const size_t eol = headers.find('\n');
    std::string_view line = headers.substr(0, eol);
    headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && EqualsIgnoringCase(line.substr(0, colon), name)) {
      return TrimSpaces(line.substr(colon + 1));
    }
  }
  return std::nullopt;
}

// Standard base64 with padding (RFC 4648 section 4), as Go's
// base64.StdEncoding reads basic-auth credentials; nothing when malformed.
std::optional<std::string> DecodeBase64(std::string_view in) {
  auto value = [](char c) -> int {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return c - 'a' + 26;
    if (c >= '0' && c <= '9') return c - '0' + 52;
    if (c == '+') return 62;
    if (c == '/') return 63;
    return -1;
  };
  if (in.size() % 4 != 0) return std::nullopt;
  std::string out;
  out.reserve(in.size() / 4 * 3);
  for (size_t i = 0; i < in.size(); i += 4) {
    const bool last = i + 4 == in.size();
    int v[4];
    int padding = 0;
    for (int k = 0; k < 4; ++k) {
      const char c = in[i + k];
      if (c == '=' && last && k >= 2) {
        v[k] = 0;
        ++padding;
        continue;
      }
      if (padding > 0) return std::nullopt;  // data after '='
      v[k] = value(c);
      if (v[k] < 0) return std::nullopt;
    }
    const unsigned bits = (v[0] << 18) | (v[1] << 12) | (v[2] << 6) | v[3];
    out.push_back(static_cast<char>(bits >> 16));
    if (padding < 2) out.push_back(static_cast<char>((bits >> 8) & 0xff));
    if (padding < 1) out.push_back(static_cast<char>(bits & 0xff));
  }
  return out;
}

// Whether the request's headers carry basic-auth credentials that `check`
// accepts (Go's Request.BasicAuth: the first Authorization header, scheme
// "Basic" in any case, base64 of "user:password" split at the first colon).
bool Authorized(std::string_view headers, const CredentialCheck& check) {
  std::optional<std::string_view> value = HeaderValue(headers, "authorization");
  constexpr std::string_view kScheme = "basic ";
  if (!value || value->size() < kScheme.size() ||
      !EqualsIgnoringCase(value->substr(0, kScheme.size()), kScheme)) {
    return false;
  }
  std::optional<std::string> decoded = DecodeBase64(value->substr(kScheme.size()));
  if (!decoded) return false;
  const size_t colon = decoded->find(':');
  if (colon == std::string::npos) return false;
  const std::string_view pair = *decoded;
  return check(pair.substr(0, colon), pair.substr(colon + 1));
}

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

HttpRequestDecision DecideHttpRequest(std::string_view received, size_t max_request_bytes,
                                      const CredentialCheck& credentials) {
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
  const size_t line_end = request.find('\n');
  if (credentials && !Authorized(request.substr(line_end + 1), credentials)) {
    return error(401, d.head_only ? kUnauthorizedHead : kUnauthorized);
  }
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

void MetricsHttpServer::SetSecurity(WebSecurity security) {
  security_ = std::move(security);
  credentials_ = nullptr;
  if (security_.basic_auth) {
    credentials_ = [verifier = security_.basic_auth](std::string_view user,
                                                     std::string_view password) {
      return verifier->Verify(user, password);
    };
  }
  if (security_.tls) std::signal(SIGPIPE, SIG_IGN);
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
      // TLS waits as OpenSSL's last call said (a read may need to write, a
      // write to read); plain HTTP reads until it has an answer to send.
      const bool out = c.tls != nullptr ? c.tls_wants_write : !c.pending.empty();
      polled.push_back({c.fd, static_cast<short>(out ? POLLOUT : POLLIN), 0});
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
      if (polled[i].revents == 0 || c.fd < 0) continue;
      if (c.handshaking) {
        Handshake(c);
      } else if (!c.pending.empty()) {
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
    if (security_.tls) {
      c.tls = SSL_new(security_.tls.get());  // holds its own reference to the context
      if (c.tls == nullptr || SSL_set_fd(c.tls, fd) != 1) {
        c.tls_failed = true;
        Close(c);
        continue;
      }
      // Answers are written from a buffer that stays put, record by record
      // as the socket drains.
      SSL_set_mode(c.tls, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
      SSL_set_accept_state(c.tls);
      c.handshaking = true;
      Handshake(c);
      continue;
    }
    // A scraper's request usually arrives with its connection: answer it
    // before a later connection could displace this one.
    ReadRequest(c);
  }
}

bool MetricsHttpServer::TlsWaits(Connection& c, int result) {
  switch (SSL_get_error(c.tls, result)) {
    case SSL_ERROR_WANT_READ:
      c.tls_wants_write = false;
      return true;
    case SSL_ERROR_WANT_WRITE:
      c.tls_wants_write = true;
      return true;
    case SSL_ERROR_ZERO_RETURN:  // the client's close_notify: it may still read ours
      return false;
    default:  // SSL_ERROR_SSL, SSL_ERROR_SYSCALL: the connection is unusable
      c.tls_failed = true;
      return false;
  }
}

void MetricsHttpServer::Handshake(Connection& c) {
  ERR_clear_error();  // SSL_get_error reads the thread's queue
  const int result = SSL_do_handshake(c.tls);
  if (result == 1) {
    c.handshaking = false;
    // The request often arrives with the handshake's last flight.
    return ReadTlsRequest(c);
  }
  if (!TlsWaits(c, result)) RefuseHandshake(c);
}

void MetricsHttpServer::RefuseHandshake(Connection& c) {
  const unsigned long error = ERR_peek_error();
  if (ERR_GET_LIB(error) == ERR_LIB_SSL && ERR_GET_REASON(error) == SSL_R_HTTP_REQUEST) {
    // One try; the client is closed either way.
    ::send(c.fd, kHttpToHttps.data(), kHttpToHttps.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
  }
  // No TLS error: the client went away (a TCP health check, a port scan),
  // which is no refusal worth a line.
  if (log_ && error != 0) {
    const auto now = std::chrono::steady_clock::now();
    if (now - last_refusal_logged_ < std::chrono::seconds(10)) {
      ++refusals_not_logged_;
    } else {
      std::string peer = "a client";
      sockaddr_storage address{};
      socklen_t size = sizeof address;
      char host[INET6_ADDRSTRLEN] = {};
      if (::getpeername(c.fd, reinterpret_cast<sockaddr*>(&address), &size) == 0) {
        const void* ip =
            address.ss_family == AF_INET6
                ? static_cast<const void*>(&reinterpret_cast<sockaddr_in6*>(&address)->sin6_addr)
                : &reinterpret_cast<sockaddr_in*>(&address)->sin_addr;
        if (::inet_ntop(address.ss_family, ip, host, sizeof host) != nullptr) peer = host;
      }
      const char* reason = ERR_reason_error_string(error);
      std::string line = "TLS handshake with " + peer + " refused: " +
                         (reason != nullptr ? reason : "OpenSSL error " + std::to_string(error));
      if (refusals_not_logged_ > 0) {
        line += " (and " + std::to_string(refusals_not_logged_) + " more since the last report)";
      }
      log_(line);
      last_refusal_logged_ = now;
      refusals_not_logged_ = 0;
    }
  }
  ERR_clear_error();
  Close(c);
}

void MetricsHttpServer::ReadTlsRequest(Connection& c) {
  char buf[4096];
  for (;;) {
    ERR_clear_error();
    const int n = SSL_read(c.tls, buf, sizeof buf);
    if (n <= 0) {
      if (!TlsWaits(c, n)) Close(c);
      return;
    }
    const size_t room = limits_.max_request_bytes - c.request.size();
    c.request.append(buf, std::min(static_cast<size_t>(n), room));
    const HttpRequestDecision decision =
        DecideHttpRequest(c.request, limits_.max_request_bytes, credentials_);
    if (decision.action == HttpRequestDecision::Action::kRespond) return Answer(c, decision);
  }
}

void MetricsHttpServer::ReadRequest(Connection& c) {
  if (c.tls != nullptr) return ReadTlsRequest(c);
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
    const HttpRequestDecision decision =
        DecideHttpRequest(c.request, limits_.max_request_bytes, credentials_);
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
  if (c.tls != nullptr) {
    // TLS encrypts from one buffer; records go out as the socket takes them.
    c.pending.assign(head);
    c.pending.append(body);
    c.pending_offset = 0;
    return FlushTlsPending(c);
  }
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

void MetricsHttpServer::FlushTlsPending(Connection& c) {
  while (c.pending_offset < c.pending.size()) {
    ERR_clear_error();
    const int sent =
        SSL_write(c.tls, c.pending.data() + c.pending_offset,
                  static_cast<int>(std::min<size_t>(c.pending.size() - c.pending_offset, INT_MAX)));
    if (sent <= 0) {
      if (!TlsWaits(c, sent)) Close(c);
      return;
    }
    c.pending_offset += static_cast<size_t>(sent);
  }
  Close(c);
}

void MetricsHttpServer::FlushPending(Connection& c) {
  if (c.tls != nullptr) return FlushTlsPending(c);
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
  if (c.tls != nullptr) {
    // close_notify, one try: the answer's end is its Content-Length, so a
    // client that misses it loses nothing.
    if (!c.handshaking && !c.tls_failed) {
      ERR_clear_error();
      SSL_shutdown(c.tls);
    }
    ERR_clear_error();
    SSL_free(c.tls);
    c.tls = nullptr;
  }
  c.handshaking = false;
  c.tls_wants_write = false;
  c.tls_failed = false;
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
