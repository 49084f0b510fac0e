// fabtrack fabric serve [scan's --ca ... --discovery-smps] [--listen A:P] [--max-age S]
//                       [--web.config.file F] [--duration S]
// fabtrack fabric scan [--ca DEV] [--port N] [--format text|json|prometheus] [--textfile DIR]
//                      [--cluster C [--db CONNINFO]] [--timeout-ms MS] [--retries N] [--window N]
//                      [--discovery-smps N] [--discovery smp|ibnetdisc] [--errors-only]
//                      [--xmit-wait-per-second R]
// Reads the InfiniBand subnet from the management side: discovery, then
// every switch and HCA port's PortCounters (PortCountersExtended where the
// PMA has it, PortXmitWait), many MADs in flight, each with a timeout and
// retries (one PortCountersExtended per port where it holds them all; a
// switch whose AllPortSelect sum is clean is asked no PortCounters per port); what did not answer
// is a finding. With --cluster the scan is stored and judged against the cluster's previous stored
// scan (errors, congestion, links down or flapping in between). Exit 0 scanned (whatever the
// findings), 1 no scan (no CA, no subnet manager, built without libibmad), 2 usage, 3 database.
// --format prometheus prints every switch port's counters under
// infiniband_exporter's names (collector/fabric/switch_exposition.h);
// --textfile DIR writes the same to DIR/fabtrack_fabric.prom for
// node_exporter's textfile collector, atomically (temporary file, rename).
#include <chrono>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>

#include "analyzer/report/json_report.h"
#include "app/fabric_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "cli/metrics_serve.h"
#include "collector/fabric/switch_exposition.h"
#include "core/atomic_file.h"
#include "core/exit_code.h"
#include "core/fabric_scan_json.h"

namespace fabtrack::cli {
namespace {

struct FabricScanOptions {
  app::FabricScanRequest request;
  std::string format = "text";
  std::string cluster;
  std::optional<std::string> textfile;  // a node_exporter textfile-collector folder
};

void PrintText(const app::FabricScanResult& r) {
  const FabricScan& s = r.scan;
  std::map<std::string, int> types;
  for (const FabricNode& n : s.nodes) ++types[n.type];
  std::cout << "fabric scan from " << (s.source.empty() ? "?" : s.source) << " at " << s.scanned_at
            << ": " << s.nodes.size() << " nodes (" << types["switch"] << " switches, "
            << types["ca"] << " CAs), " << s.links.size() << " links, " << s.unanswered.size()
            << " unanswered; " << s.mads_sent << " PMA MADs (" << s.mads_retried << " retried) in "
            << s.duration_s << " s (discovery " << s.discovery_s << " s)\n";
  if (r.previous_scanned_at) {
    std::cout << "window: since the previous stored scan at " << *r.previous_scanned_at << "\n";
  } else {
    std::cout << "window: none (judged alone: what did not answer, link rates)\n";
  }
  if (r.stored_id) {
    std::cout << "stored: scan " << *r.stored_id << ", " << r.port_samples
              << " switch port samples\n";
  } else if (r.spooled) {
    std::cout << "stored: not yet: the database is away, the scan is spooled (judged alone)\n";
  }
  if (r.findings.empty()) {
    std::cout << "findings: none\n";
    return;
  }
  std::cout << "findings: " << r.findings.size() << "\n";
  for (const Finding& f : r.findings) {
    std::cout << "  " << SeverityLabel(f.severity) << " " << f.kind << ": " << f.message << "\n";
  }
}

// The result of a large subnet is hundreds of thousands of small
// allocations (every port's counter map); freeing them one by one just
// before the process ends was ~7% of a 256-switch scan's CPU (perf). The
// last result stays reachable from here, so leak checkers see no leak, and
// the process's end hands the memory back at once.
app::FabricScanResult& KeptUntilExit(app::FabricScanResult result) {
  static auto* kept = new std::unique_ptr<app::FabricScanResult>;
  *kept = std::make_unique<app::FabricScanResult>(std::move(result));
  return **kept;
}

void RunFabricScan(FabricScanOptions& o) {
  if (!o.cluster.empty()) o.request.cluster = o.cluster;
  if (o.textfile && !std::filesystem::is_directory(*o.textfile)) {
    std::cerr << "fabtrack fabric scan: --textfile " << *o.textfile << ": not a folder\n";
    throw CommandExit{kExitUsage};
  }
  const app::FabricScanResult& r = KeptUntilExit(app::ScanFabric(o.request, std::cerr));
  if (o.textfile) {
    const std::string path =
        (std::filesystem::path(*o.textfile) / fabric::kSwitchTextfileName).string();
    try {
      WriteFileAtomically(path, fabric::RenderSwitchExposition(r.scan));
    } catch (const std::exception& e) {
      std::cerr << "fabtrack fabric scan: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
  }
  if (o.format == "prometheus") {
    std::cout << fabric::RenderSwitchExposition(r.scan);
  } else if (o.format == "json") {
    nlohmann::json doc = FabricScanToJson(r.scan);
    doc["window_start"] =
        r.previous_scanned_at ? nlohmann::json(*r.previous_scanned_at) : nlohmann::json(nullptr);
    nlohmann::json findings = nlohmann::json::array();
    for (const Finding& f : r.findings) findings.push_back(analyzer::FindingJson(f));
    doc["findings"] = std::move(findings);
    if (r.stored_id) doc["stored_scan_id"] = *r.stored_id;
    if (r.spooled) doc["spooled"] = true;
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  } else {
    PrintText(r);
  }
}

struct FabricServeOptions {
  fabric::ScanSettings settings;
  // infiniband_exporter's port: its scrape configurations keep working.
  MetricsServeSettings serve{"fabric serve", "0.0.0.0:9315", std::nullopt, std::nullopt};
  double max_age_s = 0;  // a scan younger than this answers the scrape again
};

void RunFabricServe(const FabricServeOptions& o) {
  // Each scrape scans the subnet (as infiniband_exporter does), unless the
  // last good scan is younger than --max-age: on a large fabric several
  // Prometheus servers scraping must not multiply the MADs.
  std::string body;
  std::optional<std::chrono::steady_clock::time_point> scanned_at;
  std::string last_error;
  ServeMetrics(o.serve, [&]() -> const std::string& {
    const auto now = std::chrono::steady_clock::now();
    if (scanned_at && std::chrono::duration<double>(now - *scanned_at).count() < o.max_age_s) {
      return body;
    }
    fabric::ScanOutcome outcome = fabric::ScanSubnet(o.settings);
    if (outcome.scan) {
      body = fabric::RenderSwitchExposition(*outcome.scan) + fabric::RenderScanSuccess(true);
      scanned_at = now;
      if (!last_error.empty()) std::cerr << "fabtrack fabric serve: scanning again\n";
      last_error.clear();
    } else {
      body = fabric::RenderScanSuccess(false);
      scanned_at.reset();
      // Once per new reason, not once per scrape.
      if (outcome.error != last_error) {
        std::cerr << "fabtrack fabric serve: no scan: " << outcome.error << "\n";
      }
      last_error = outcome.error;
    }
    return body;
  });
}

void AddScanSettingsOptions(CLI::App* command, fabric::ScanSettings* s) {
  command
      ->add_option("--ca", s->ca, "local CA to send from (default: the first with an active port)")
      ->check(NameValue());
  command->add_option("--port", s->port, "its port (default: the first active)")
      ->check(WholeNumber(0, 254));
  command->add_option("--timeout-ms", s->policy.timeout_ms, "per MAD try (default 300)")
      ->check(WholeNumber(1, 60000));
  command->add_option("--retries", s->policy.retries, "tries after the first (default 2)")
      ->check(WholeNumber(0, 20));
  command->add_option("--window", s->policy.window, "PMA MADs in flight at once (default 64)")
      ->check(WholeNumber(1, 4096));
  command
      ->add_option("--discovery-smps", s->discovery_smps,
                   "discovery's SMPs in flight at once (default 16)")
      ->check(WholeNumber(1, 256));
  static const std::map<std::string, fabric::DiscoveryEngine> kEngines = {
      {"smp", fabric::DiscoveryEngine::kSmpWalk},
      {"ibnetdisc", fabric::DiscoveryEngine::kLibibnetdisc}};
  command
      ->add_option("--discovery", s->discovery,
                   "who discovers the subnet: smp (fabtrack's walk of directed-route SMPs, "
                   "default) or ibnetdisc (libibnetdisc, as ibnetdiscover does)")
      ->transform(CLI::CheckedTransformer(kEngines));
  command->add_flag("--errors-only", s->errors_only,
                    "read as ibqueryerrors does: a switch whose AllPortSelect sum shows no error "
                    "(and no XmitWait) is not asked per port (its ports' error counters are 0, "
                    "their data counters absent); elsewhere one MAD per port, no data counters "
                    "unless that MAD carries them");
}

}  // namespace

void SetupFabric(CLI::App& app) {
  CLI::App* fabric = app.add_subcommand(
      "fabric", "The InfiniBand subnet from the switches' side (libibnetdisc/libibmad MADs)");
  fabric->require_subcommand(1);
  auto o = std::make_shared<FabricScanOptions>();
  CLI::App* scan = fabric->add_subcommand(
      "scan",
      "Discover the subnet, read every switch and HCA port's counters, name what did not "
      "answer; with --cluster store it and judge the window since the previous stored scan. "
      "Exit 0 scanned (whatever the findings), 1 no scan, 2 usage, 3 database");
  AddScanSettingsOptions(scan, &o->request.settings);
  AddFormatOption(scan, &o->format, {"text", "json", "prometheus"});
  scan->add_option("--textfile", o->textfile,
                   "also write every switch port's metrics (infiniband_exporter's names) to "
                   "DIR/fabtrack_fabric.prom for node_exporter's textfile collector, atomically");
  scan->add_option("--cluster", o->cluster,
                   "store the scan for this cluster and judge it against its previous one")
      ->check(NameValue());
  scan->add_option("--xmit-wait-per-second", o->request.thresholds.xmit_wait_per_second,
                   "PortXmitWait ticks/s on an uplink end that count as congestion (default 1000)")
      ->check(PositiveAmount());
  AddDatabaseOptions(scan, &o->request.database);
  scan->callback([o] { RunFabricScan(*o); });

  auto sv = std::make_shared<FabricServeOptions>();
  CLI::App* serve = fabric->add_subcommand(
      "serve",
      "Prometheus exporter of every switch port (infiniband_exporter's names, both ends of each "
      "cable): the subnet is scanned for each scrape; fabtrack_fabric_scan_success says whether "
      "it could be");
  AddScanSettingsOptions(serve, &sv->settings);
  AddMetricsServeOptions(serve, &sv->serve);
  serve
      ->add_option("--max-age", sv->max_age_s,
                   "answer from the last scan while it is younger than S seconds (default 0: "
                   "scan for every scrape)")
      ->check(PositiveAmount());
  serve->callback([sv] { RunFabricServe(*sv); });
}

}  // namespace fabtrack::cli
