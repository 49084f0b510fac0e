// What every exporter command shares (`counters serve`, `fabric serve`): the
// listening socket, node_exporter's --web.config.file (TLS, basic auth),
// re-read on SIGHUP (a broken file is reported and the running one kept),
// SIGINT/SIGTERM and --duration to stop.
#pragma once

#include <optional>
#include <string>

#include "cli/commands.h"
#include "collector/counters/metrics_http_server.h"

namespace fabtrack::cli {

struct MetricsServeSettings {
  std::string command;  // "counters serve": every message starts "fabtrack <command>: "
  std::string listen;
  std::optional<std::string> web_config_file;
  std::optional<double> duration;  // stop after S seconds (tests, one-off checks)
};

// --listen (its default is settings->listen), --duration, --web.config.file.
void AddMetricsServeOptions(CLI::App* serve, MetricsServeSettings* settings);

// Serves `render`'s body on /metrics until a signal or the duration ends it.
// A listen address or web configuration that cannot be used prints why and
// throws CommandExit (usage, input error).
void ServeMetrics(const MetricsServeSettings& settings, MetricsHttpServer::Render render);

}  // namespace fabtrack::cli
