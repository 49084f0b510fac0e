// fabtrack spool status|replay: what waits in the local spool (batches a
// collector could not write while the database was away), and storing it now.
// Every command that reaches the database also replays the spool first.
#include <iostream>

#include "cli/commands.h"
#include "cli/database_access.h"
#include "store/spool.h"

namespace fabtrack::cli {
namespace {

void RunStatus() {
  store::Spool spool(store::DefaultSpoolDir());
  std::vector<std::string> pending = spool.Pending();
  std::cout << "spool " << spool.dir() << ": " << pending.size() << " batch(es) pending\n";
  for (const std::string& path : pending) std::cout << "  " << path << "\n";
}

void RunReplay(const DatabaseOptions& database) {
  store::Spool spool(store::DefaultSpoolDir());
  if (spool.Pending().empty()) {
    std::cout << "spool " << spool.dir() << ": nothing to replay\n";
    return;
  }
  // OpenDatabaseOrExit replays before returning.
  auto connection = OpenDatabaseOrExit(database, SchemaPolicy::kRequireCurrent, std::cerr);
  const size_t left = spool.Pending().size();
  std::cout << "spool " << spool.dir() << ": " << left << " batch(es) still pending\n";
  if (left > 0) throw CommandExit{kExitDatabaseError};
}

}  // namespace

void SetupSpool(CLI::App& app) {
  auto database = std::make_shared<DatabaseOptions>();
  CLI::App* spool = app.add_subcommand(
      "spool", "Batches kept locally while the database was unavailable ($FABTRACK_SPOOL_DIR)");
  spool->require_subcommand(1);
  spool->add_subcommand("status", "List pending batches")->callback([] { RunStatus(); });
  CLI::App* replay = spool->add_subcommand("replay", "Store pending batches now, oldest first");
  AddDatabaseOptions(replay, database.get());
  replay->callback([database] { RunReplay(*database); });
}

}  // namespace fabtrack::cli
