#include "cli/metrics_serve.h"

#include <chrono>
#include <csignal>
#include <iostream>
#include <memory>

#include "collector/counters/web_security.h"
#include "core/exit_code.h"

namespace fabtrack::cli {
namespace {

volatile std::sig_atomic_t serve_stop_requested = 0;
void RequestServeStop(int) { serve_stop_requested = 1; }
volatile std::sig_atomic_t serve_reload_requested = 0;
void RequestServeReload(int) { serve_reload_requested = 1; }

}  // namespace

void AddMetricsServeOptions(CLI::App* serve, MetricsServeSettings* settings) {
  serve->add_option("--listen", settings->listen,
                    "address:port (default " + settings->listen + ")");
  serve->add_option("--duration", settings->duration, "stop after S seconds")
      ->check(PositiveAmount());
  serve->add_option("--web.config.file", settings->web_config_file,
                    "TLS and basic auth: node_exporter's web configuration file "
                    "(tls_server_config, basic_auth_users); re-read on SIGHUP");
}

void ServeMetrics(const MetricsServeSettings& s, MetricsHttpServer::Render render) {
  const std::string prefix = "fabtrack " + s.command + ": ";
  std::unique_ptr<MetricsHttpServer> server;
  try {
    server = std::make_unique<MetricsHttpServer>(s.listen, std::move(render));
  } catch (const std::exception& e) {
    std::cerr << prefix << e.what() << "\n";
    throw CommandExit{kExitUsage};
  }
  if (s.web_config_file) {
    try {
      WebSecurity security = LoadWebSecurity(*s.web_config_file);
      std::cerr << prefix << *s.web_config_file << ": " << security.summary << "\n";
      server->SetSecurity(std::move(security));
    } catch (const std::exception& e) {
      std::cerr << prefix << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
    server->SetLog([prefix](const std::string& line) { std::cerr << prefix << line << "\n"; });
  }
  // SIGHUP re-reads the web configuration and its certificates (rotated
  // certificates, changed passwords); a broken one is reported and the
  // running one kept. Without --web.config.file there is nothing to re-read,
  // and a reload (systemd's ExecReload) must not end the exporter either.
  auto reload = [&] {
    serve_reload_requested = 0;
    if (!s.web_config_file) {
      std::cerr << prefix << "SIGHUP: no --web.config.file to re-read\n";
      return;
    }
    try {
      WebSecurity security = LoadWebSecurity(*s.web_config_file);
      std::cerr << prefix << "reloaded " << *s.web_config_file << ": " << security.summary << "\n";
      server->SetSecurity(std::move(security));
    } catch (const std::exception& e) {
      std::cerr << prefix << "reload refused, the previous web configuration stays: " << e.what()
                << "\n";
    }
  };
  std::signal(SIGINT, RequestServeStop);
  std::signal(SIGTERM, RequestServeStop);
  std::signal(SIGHUP, RequestServeReload);
  std::cerr << prefix << "metrics on " << (server->tls() ? "https" : "http") << "://" << s.listen
            << "/metrics\n";
  const auto start = std::chrono::steady_clock::now();
  // Asked between rounds of the server's loop and after every signal: the
  // reload happens on the server's own thread, between connections' events.
  server->Serve([&] {
    if (serve_reload_requested != 0) reload();
    return serve_stop_requested != 0 ||
           (s.duration &&
            std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
                *s.duration);
  });
}

}  // namespace fabtrack::cli
