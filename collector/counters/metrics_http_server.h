// The HTTP edge of `fabtrack counters serve`: a small civetweb server (the
// same embedded server prometheus-cpp's Exposer runs on) that answers
// GET /metrics with the body a callback renders, and a landing page on /.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>

struct mg_context;
struct mg_connection;

namespace fabtrack {

class MetricsHttpServer {
 public:
  // Renders the /metrics body. Scrapes take turns (one at a time), so the
  // renderer may keep state such as open file descriptors and buffers.
  using Render = std::function<const std::string&()>;

  // Listens on `listen` ("0.0.0.0:9477", "127.0.0.1:9477"). Throws
  // std::runtime_error naming the address when it cannot.
  MetricsHttpServer(const std::string& listen, Render render);
  ~MetricsHttpServer();
  MetricsHttpServer(const MetricsHttpServer&) = delete;
  MetricsHttpServer& operator=(const MetricsHttpServer&) = delete;

 private:
  static int HandleMetrics(::mg_connection* conn, void* self);
  static int HandleRoot(::mg_connection* conn, void* self);

  Render render_;
  std::mutex scrape_mutex_;
  std::string response_;  // reused: headers and body of the current scrape
  mg_context* context_ = nullptr;
};

}  // namespace fabtrack
