// fabtrack db start|stop|status|migrate|prune
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <optional>

#include "app/database_admin.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "core/clock.h"

namespace fabtrack::cli {
namespace {

void RunStart(const DatabaseOptions& o) {
  app::EmbeddedStart r = app::StartEmbedded(o, std::cerr);
  std::cout << (r.initialized ? "initialized and " : "")
            << (r.started ? "started" : "already running") << ": embedded PostgreSQL in " << r.root
            << "\n"
            << "schema version " << r.schema.to_version
            << (r.schema.applied.empty()
                    ? ""
                    : " (applied " + std::to_string(r.schema.applied.size()) + ")")
            << "\n"
            << "connect with: psql \"" << r.conninfo << "\"\n";
}

void RunStop(const DatabaseOptions& o) {
  bool stopped = app::StopEmbedded(o, std::cerr);
  std::cout << (stopped ? "stopped" : "not running") << ": embedded PostgreSQL in "
            << app::InspectEmbedded(o).root << "\n";
}

void RunStatus(const DatabaseOptions& o) {
  app::EmbeddedState server = app::InspectEmbedded(o);
  std::cout << "embedded: " << server.root << " "
            << (!server.initialized ? "not initialized"
                : server.running    ? "running"
                                    : "stopped")
            << "\n";
  if (server.running) std::cout << "  conninfo: " << server.conninfo << "\n";
  std::cout << "target: " << app::DescribeTarget(o) << "\n";
  // Report the configured database's schema without starting anything.
  if (server.targets_embedded && !server.running) throw CommandExit{kExitDatabaseError};
  app::SchemaState schema = app::ReadSchemaState(o, std::cerr);
  std::cout << "schema: version " << schema.have << " (this fabtrack: " << schema.want << ")"
            << (schema.have == schema.want  ? ""
                : schema.have < schema.want ? " — run `fabtrack db migrate`"
                                            : " — NEWER than this fabtrack")
            << "\n";
  if (schema.have != schema.want) throw CommandExit{kExitDatabaseError};
}

void RunMigrate(const DatabaseOptions& o) {
  app::MigrationReport r = app::MigrateSchema(o, std::cerr);
  if (r.applied.empty()) {
    std::cout << "schema is current (version " << r.to_version << "); nothing to do\n";
  }
  for (const auto& name : r.applied) std::cout << "applied " << name << "\n";
  if (!r.applied.empty()) {
    std::cout << "schema version " << r.from_version << " -> " << r.to_version << "\n";
  }
}

struct PruneOptions {
  std::string older_than;
  std::optional<std::string> cluster;
  bool yes = false;
};

// "400d", "8w", "36h": how far back history is kept.
std::optional<double> RetentionSeconds(const std::string& text) {
  if (text.size() < 2) return std::nullopt;
  double unit = 0;
  switch (text.back()) {
    case 'h':
      unit = 3600;
      break;
    case 'd':
      unit = 86400;
      break;
    case 'w':
      unit = 7 * 86400;
      break;
    default:
      return std::nullopt;
  }
  const std::string number = text.substr(0, text.size() - 1);
  if (number.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  const double n = std::strtod(number.c_str(), nullptr);  // HUGE_VAL past double's range
  return n > 0 ? std::optional(n * unit) : std::nullopt;
}

// No history is older than this: a longer period is a typo (99999999999d),
// refused before PostgreSQL is asked about a date before year 1.
constexpr double kLongestRetentionSeconds = 100 * 366 * 86400.0;

void RunPrune(const DatabaseOptions& o, const PruneOptions& p) {
  const std::optional<double> keep = RetentionSeconds(p.older_than);
  if (!keep) {
    std::cerr << "fabtrack db prune: --older-than " << p.older_than
              << ": expected a positive count of hours, days or weeks, e.g. 400d, 8w, 36h\n";
    throw CommandExit{kExitUsage};
  }
  if (*keep > kLongestRetentionSeconds) {
    std::cerr << "fabtrack db prune: --older-than " << p.older_than
              << ": more than a century; at most 36600d (5228w, 878400h)\n";
    throw CommandExit{kExitUsage};
  }
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  const std::string cutoff = IsoFromSeconds(now - *keep);
  app::PruneReport r = app::PruneHistory(o, cutoff, p.cluster, p.yes, std::cerr);
  std::cout << (p.yes ? "deleted" : "would delete (dry run; --yes deletes)") << ", older than "
            << cutoff << (p.cluster ? " in cluster " + *p.cluster : "") << ":\n"
            << "  runs                  " << r.runs << " (with their results, samples, log lines)\n"
            << "  port counter samples  " << r.port_counter_samples << "\n"
            << "  snapshot windows      " << r.snapshot_port_deltas
            << " counter deltas between two snapshots\n"
            << "  resolved findings     " << r.resolved_findings << "\n"
            << "  analyses              " << r.analyses << "\n"
            << "  inspector jobs        " << r.inspector_jobs << "\n"
            << "  locate verdicts       " << r.locate_verdicts << "\n"
            << "  A/B comparisons       " << r.ab_comparisons << "\n"
            << "  RAS snapshots         " << r.ras_snapshots << "\n"
            << "  RAS job verdicts      " << r.ras_job_verdicts << "\n"
            << "  RAS events            " << r.ras_events << "\n";
}

}  // namespace

void SetupDb(CLI::App& app) {
  CLI::App* db = app.add_subcommand("db", "Manage the database: embedded server and migrations");
  db->require_subcommand(1);
  auto options = std::make_shared<DatabaseOptions>();

  CLI::App* start =
      db->add_subcommand("start", "Initialize (first time) and start the embedded PostgreSQL");
  start->add_option("--data-dir", options->data_dir, "embedded server directory");
  start->callback([options] { RunStart(*options); });

  CLI::App* stop = db->add_subcommand("stop", "Stop the embedded PostgreSQL");
  stop->add_option("--data-dir", options->data_dir, "embedded server directory");
  stop->callback([options] { RunStop(*options); });

  CLI::App* status =
      db->add_subcommand("status", "Show the embedded server and the schema version");
  AddDatabaseOptions(status, options.get());
  status->callback([options] { RunStatus(*options); });

  CLI::App* migrate = db->add_subcommand("migrate", "Apply missing schema migrations");
  AddDatabaseOptions(migrate, options.get());
  migrate->callback([options] { RunMigrate(*options); });

  auto prune = std::make_shared<PruneOptions>();
  CLI::App* prune_cmd = db->add_subcommand(
      "prune",
      "Delete history older than a retention period (dry run unless --yes); open findings stay");
  prune_cmd->add_option("--older-than", prune->older_than, "e.g. 400d, 8w, 36h")->required();
  prune_cmd->add_option("--cluster", prune->cluster, "only this cluster (default: all)")
      ->check(NameValue());
  prune_cmd->add_flag("--yes", prune->yes, "delete (without it: count only)");
  AddDatabaseOptions(prune_cmd, options.get());
  prune_cmd->callback([options, prune] { RunPrune(*options, *prune); });
}

}  // namespace fabtrack::cli
