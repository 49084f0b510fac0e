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
// socket is non-blocking and every connection has a deadline.
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <vector>

namespace fabtrack {

// "HOST:PORT", "[V6]:PORT", ":PORT" or "PORT" (every interface) as the
// strings getaddrinfo(3) takes; HOST empty for every interface. Throws
// std::invalid_argument naming the text when it is none of those.
struct ListenAddress {
  std::string host;
  std::string port;
};
ListenAddress ParseListenAddress(const std::string& text);

class MetricsHttpServer {
 public:
  // Renders the /metrics body; called from Serve's thread, one scrape at a
  // time, so the renderer may keep state such as open files and buffers.
  using Render = std::function<const std::string&()>;

  struct Limits {
    int max_connections = 16;                   // more wait in the listen backlog
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

  // Serves until should_stop() returns true; it is asked at least every
  // 100 ms and after every signal that interrupts the wait.
  void Serve(const std::function<bool()>& should_stop);

 private:
  struct Connection {
    int fd = -1;
    std::string request;  // bytes read so far (capacity kept between uses)
    std::string pending;  // the answer's unsent rest, when the socket was full
    size_t pending_offset = 0;
    std::chrono::steady_clock::time_point deadline;
  };

  void Accept();
  void ReadRequest(Connection& c);
  void Answer(Connection& c, std::string_view request);
  void Send(Connection& c, std::string_view head, std::string_view body);
  void FlushPending(Connection& c);
  void Close(Connection& c);

  Render render_;
  Limits limits_;
  int listen_fd_ = -1;
  std::vector<Connection> connections_;
  std::string head_;  // reused: status line and headers of an answer
};

}  // namespace fabtrack
