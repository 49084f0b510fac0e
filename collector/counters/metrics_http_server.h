// The HTTP edge of `fabtrack counters serve`: a single-threaded HTTP/1.1
// server on poll(2) that answers GET/HEAD /metrics with the body a callback
// renders, a landing page on /, and nothing else.
//
// Why not an embedded server library: a scrape of a large host is ~600
// pread(2)s and one render, well under a millisecond; civetweb (what
// prometheus-cpp's Exposer runs on) spent a third as much again handing each
// connection from its accepting thread to a worker thread. One thread serves
// scrapes one at a time, which the sampler needs anyway (it owns the open
// counter files), and a slow or idle client cannot hold the others up: every
// socket is non-blocking, every connection has a deadline, and idle
// connections give way to new ones when every slot is taken.
//
// With `--web.config.file` (web_security.h) it speaks TLS through OpenSSL:
// the handshake runs inside the same poll loop on the non-blocking socket
// and within the connection's deadline, so a client that stalls mid-handshake
// holds no one up either; and it asks for HTTP basic authentication.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "collector/counters/web_security.h"

struct ssl_st;  // OpenSSL's SSL

namespace fabtrack {

// "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (every interface) as the
// strings getaddrinfo(3) takes; HOST empty for every interface. Throws
// std::invalid_argument naming the text when it is none of those.
struct ListenAddress {
  std::string host;
  std::string port;
};
ListenAddress ParseListenAddress(const std::string& text);

// Whether a scraper's basic-auth credentials are good; an empty function: no
// authentication asked for.
using CredentialCheck = std::function<bool(std::string_view user, std::string_view password)>;

// What the server does with the bytes a connection has sent so far: the whole
// of its request handling, without sockets (fuzz/http_request_fuzz.cc).
// Every answer is sent with "Connection: close" and the connection closed
// after it; bytes after the request's blank line (a body, a pipelined second
// request) are never looked at. Closing without an answer happens on socket
// events only (the client closed, an error, the deadline), never on bytes.
struct HttpRequestDecision {
  enum class Action {
    kNeedMore,  // no blank line yet and under the size limit: read on
    kRespond,   // answer (below), then close
  };
  enum class Route {
    kNone,     // kNeedMore
    kMetrics,  // 200 with the rendered exposition
    kLanding,  // 200 with the landing page
    kError,    // `error_response`, complete (status line, headers, body)
  };
  Action action = Action::kNeedMore;
  Route route = Route::kNone;
  int status = 0;  // 200, 400, 401, 404, 405 or 431 when answering
  // HEAD: the headers announce the length GET would send, and no body follows.
  bool head_only = false;
  // Static storage, never a view into the request.
  std::string_view error_response;
  // Bytes the request line and headers took, blank line included (0 for 431).
  size_t request_bytes = 0;
};

// `received`: the connection's bytes so far, at most `max_request_bytes` of
// them (the server stops storing there). The decision depends only on the
// bytes up to the request's first blank line, so it is the same however the
// bytes were split across reads.
// With `credentials`, every well-formed request (any path, as
// exporter-toolkit's) must carry an `Authorization: Basic` header whose user
// and password it accepts, or is answered 401 with `WWW-Authenticate: Basic`;
// it is called once, when the request is complete.
HttpRequestDecision DecideHttpRequest(std::string_view received, size_t max_request_bytes,
                                      const CredentialCheck& credentials = {});

// The status line and headers answering a request that `decision` routes to
// a 200 (kMetrics or kLanding) whose body has `body_size` bytes, written into
// `out` (reused).
void WriteOkHead(const HttpRequestDecision& decision, size_t body_size, std::string* out);

class MetricsHttpServer {
 public:
  // Renders the /metrics body; called from Serve's thread, one scrape at a
  // time, so the renderer may keep state such as open files and buffers.
  using Render = std::function<const std::string&()>;

  struct Limits {
    // Connections served at once. Beyond it, a new client displaces the
    // oldest one still waiting to send its request; when every one is being
    // answered, new clients wait in the listen backlog.
    int max_connections = 16;
    size_t max_request_bytes = 8192;            // request line and headers
    std::chrono::milliseconds deadline{10000};  // per connection, accept to close
  };

  // Binds and listens on `listen`. Throws std::runtime_error starting
  // "cannot listen on <listen>" when it cannot.
  MetricsHttpServer(const std::string& listen, Render render, Limits limits);
  MetricsHttpServer(const std::string& listen, Render render)
      : MetricsHttpServer(listen, std::move(render), Limits{}) {}
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

  // TLS and basic auth for the connections accepted from now on (plain
  // HTTP without authentication until called); connections being served
  // finish with what they started with. Call it from Serve's thread (its
  // should_stop, on SIGHUP) or before Serve. With TLS the process ignores
  // SIGPIPE: OpenSSL writes to sockets with write(2), and a scraper that
  // hangs up must not end the exporter.
  void SetSecurity(WebSecurity security);
  bool tls() const { return security_.tls != nullptr; }

  // Where refused TLS handshakes are reported (a client without a trusted
  // certificate, plain HTTP to the TLS port): at most one line per 10 s, a
  // count of the others in the next. Unset: not reported.
  void SetLog(std::function<void(const std::string&)> log) { log_ = std::move(log); }

  // Serves until should_stop() returns true; it is asked at least every
  // 100 ms and after every signal that interrupts the wait.
  void Serve(const std::function<bool()>& should_stop);

 private:
  struct Connection {
    int fd = -1;
    ssl_st* tls = nullptr;         // a TLS connection's OpenSSL state
    bool handshaking = false;      // TLS: the handshake is not finished
    bool tls_wants_write = false;  // TLS: the last call waits for POLLOUT, not POLLIN
    bool tls_failed = false;       // TLS: a fatal error; no close_notify is sent
    std::string request;           // bytes read so far (capacity kept between uses)
    std::string pending;           // the answer's unsent rest, when the socket was full
    size_t pending_offset = 0;
    std::chrono::steady_clock::time_point deadline;
  };

  void Accept();
  void Handshake(Connection& c);
  void RefuseHandshake(Connection& c);
  void ReadRequest(Connection& c);
  void ReadTlsRequest(Connection& c);
  void Answer(Connection& c, const HttpRequestDecision& decision);
  void Send(Connection& c, std::string_view head, std::string_view body);
  void FlushPending(Connection& c);
  void FlushTlsPending(Connection& c);
  // Records how a TLS call that did not finish waits; false: it failed.
  bool TlsWaits(Connection& c, int result);
  void Close(Connection& c);

  Render render_;
  Limits limits_;
  WebSecurity security_;
  CredentialCheck credentials_;  // empty: no authentication
  std::function<void(const std::string&)> log_;
  std::chrono::steady_clock::time_point last_refusal_logged_{};
  int refusals_not_logged_ = 0;
  int listen_fd_ = -1;
  std::vector<Connection> connections_;
  std::string head_;  // reused: status line and headers of an answer
};

}  // namespace fabtrack
