// fabtrack runs list [--cluster NAME] [--limit N] [--format table|json]
#include <cstdio>
#include <iostream>
#include <nlohmann/json.hpp>

#include "cli/commands.h"
#include "cli/database_access.h"
#include "store/run_reader.h"

namespace fabtrack::cli {
namespace {

struct RunsOptions {
  std::optional<std::string> cluster;
  int limit = 50;
  std::string format = "table";
  DatabaseOptions database;
};

std::string Join(const std::vector<std::string>& v) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : ",") + x;
  return s.empty() ? "-" : s;
}

template <typename T>
std::string Or(const std::optional<T>& v, const char* dash = "-") {
  if (!v) return dash;
  if constexpr (std::is_same_v<T, std::string>) {
    return *v;
  } else {
    return std::to_string(*v);
  }
}

void RunList(const RunsOptions& o) {
  auto connection = OpenDatabaseOrExit(o.database, SchemaPolicy::kRequireCurrent, std::cerr);
  LimitReadTime(*connection);
  std::vector<store::RunSummary> runs = store::ListRuns(*connection, {o.cluster, o.limit});
  if (o.format == "json") {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : runs) {
      out.push_back(
          {{"id", r.id},
           {"cluster", r.cluster},
           {"started_at", r.started_at},
           {"source", r.source},
           {"collective", r.collective ? nlohmann::json(*r.collective) : nullptr},
           {"nodes", r.nodes ? nlohmann::json(*r.nodes) : nullptr},
           {"ranks", r.ranks ? nlohmann::json(*r.ranks) : nullptr},
           {"network", r.network ? nlohmann::json(*r.network) : nullptr},
           {"transports", r.transports},
           {"gdrdma", r.gdrdma ? nlohmann::json(*r.gdrdma) : nullptr},
           {"sizes", r.sizes},
           {"peak_busbw_gbps", r.peak_busbw_gbps ? nlohmann::json(*r.peak_busbw_gbps) : nullptr},
           {"status", r.status}});
    }
    std::cout << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
    return;
  }
  std::printf("%6s  %-20s  %-10s  %-18s  %-10s  %5s  %5s  %-8s  %-24s  %6s  %5s  %10s  %9s  %s\n",
              "id", "started_at", "cluster", "source", "collective", "nodes", "ranks", "network",
              "transports", "gdrdma", "sizes", "peak_busbw", "lat_small", "status");
  for (const auto& r : runs) {
    char busbw[32] = "-", latency[32] = "-";
    if (r.peak_busbw_gbps) std::snprintf(busbw, sizeof busbw, "%.2f", *r.peak_busbw_gbps);
    if (r.small_latency_us) std::snprintf(latency, sizeof latency, "%.2f", *r.small_latency_us);
    std::string gdr = r.gdrdma ? (*r.gdrdma ? "yes" : "no") : "-";
    std::printf(
        "%6lld  %-20s  %-10s  %-18s  %-10s  %5s  %5s  %-8s  %-24s  %6s  %5lld  %10s  %9s  %s\n",
        static_cast<long long>(r.id), r.started_at.c_str(), r.cluster.c_str(), r.source.c_str(),
        Or(r.collective).c_str(), Or(r.nodes).c_str(), Or(r.ranks).c_str(), Or(r.network).c_str(),
        Join(r.transports).c_str(), gdr.c_str(), static_cast<long long>(r.sizes), busbw, latency,
        r.status.c_str());
  }
  if (runs.empty())
    std::cout << "(no runs" << (o.cluster ? " for cluster " + *o.cluster : "") << ")\n";
}

}  // namespace

void SetupRuns(CLI::App& app) {
  auto o = std::make_shared<RunsOptions>();
  CLI::App* runs = app.add_subcommand("runs", "Look at stored runs");
  runs->require_subcommand(1);
  CLI::App* list = runs->add_subcommand(
      "list", "List the newest runs (peak busbw in GB/s, latency of the smallest size in us)");
  list->add_option("--cluster", o->cluster, "only this cluster");
  list->add_option("--limit", o->limit, "at most this many runs")->check(CLI::PositiveNumber);
  list->add_option("--format", o->format, "table (default) or json")
      ->check(CLI::IsMember({"table", "json"}));
  AddDatabaseOptions(list, &o->database);
  list->callback([o] { RunList(*o); });
}

}  // namespace fabtrack::cli
