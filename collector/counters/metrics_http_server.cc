#include "collector/counters/metrics_http_server.h"

#include <civetweb.h>

#include <cstring>
#include <stdexcept>

namespace fabtrack {
namespace {

constexpr const char* kExpositionType = "text/plain; version=0.0.4; charset=utf-8";

bool IsGetOrHead(::mg_connection* conn, bool* head) {
  const char* method = mg_get_request_info(conn)->request_method;
  *head = std::strcmp(method, "HEAD") == 0;
  return *head || std::strcmp(method, "GET") == 0;
}

// civetweb logs through this callback; the exporter keeps quiet per request
// (Prometheus scrapes every few seconds) and reports start-up failures itself.
int DropLogMessage(const ::mg_connection*, const char*) { return 1; }

}  // namespace

MetricsHttpServer::MetricsHttpServer(const std::string& listen, Render render)
    : render_(std::move(render)) {
  mg_init_library(0);
  // Two worker threads, as prometheus-cpp's Exposer uses by default: scrapes
  // are serialised anyway and each thread holds a stack.
  const char* options[] = {"listening_ports", listen.c_str(), "num_threads", "2", nullptr};
  mg_callbacks callbacks{};
  callbacks.log_message = DropLogMessage;
  char error_text[256] = "";
  mg_init_data init{&callbacks, this, options};
  mg_error_data error{nullptr, error_text, sizeof error_text};
  context_ = mg_start2(&init, &error);
  if (context_ == nullptr) {
    mg_exit_library();
    throw std::runtime_error("cannot listen on " + listen +
                             (error_text[0] ? std::string(": ") + error_text : std::string()));
  }
  mg_set_request_handler(context_, "/metrics$", HandleMetrics, this);
  mg_set_request_handler(context_, "/$", HandleRoot, this);
}

MetricsHttpServer::~MetricsHttpServer() {
  mg_stop(context_);
  mg_exit_library();
}

int MetricsHttpServer::HandleMetrics(::mg_connection* conn, void* self) {
  auto* server = static_cast<MetricsHttpServer*>(self);
  bool head = false;
  if (!IsGetOrHead(conn, &head)) {
    mg_send_http_error(conn, 405, "%s", "only GET and HEAD\n");
    return 405;
  }
  std::lock_guard<std::mutex> lock(server->scrape_mutex_);
  const std::string& body = server->render_();
  // Status line, headers and body leave in one write: civetweb's own header
  // helpers send every header line separately, and on loopback each send is
  // a trip through the TCP stack (10 sends were ~15% of a scrape's CPU).
  // civetweb closes the connection after the handler (keep-alive is off).
  std::string& response = server->response_;
  response.assign("HTTP/1.1 200 OK\r\nContent-Type: ");
  response.append(kExpositionType);
  response.append("\r\nContent-Length: ");
  response.append(std::to_string(body.size()));
  response.append("\r\nConnection: close\r\n\r\n");
  if (!head) response.append(body);
  mg_write(conn, response.data(), response.size());
  return 200;
}

int MetricsHttpServer::HandleRoot(::mg_connection* conn, void*) {
  static constexpr const char kPage[] =
      "<html><head><title>fabtrack port exporter</title></head><body>"
      "<h1>fabtrack port exporter</h1><p><a href=\"/metrics\">Metrics</a></p></body></html>\n";
  mg_send_http_ok(conn, "text/html; charset=utf-8", sizeof kPage - 1);
  mg_write(conn, kPage, sizeof kPage - 1);
  return 200;
}

}  // namespace fabtrack
