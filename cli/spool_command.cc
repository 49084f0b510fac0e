// fabtrack spool status|replay|drop: what waits in the local spool (batches a
// collector could not write while its database was away), by the database
// each belongs to; storing them now; dropping one an operator has given up
// on. Every command that reaches a database also replays that database's own
// batches first, and never another's.
#include <ctime>
#include <iostream>
#include <map>

#include "app/database_admin.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "store/spool.h"

namespace fabtrack::cli {
namespace {

std::string Age(int64_t modified_unix) {
  const int64_t s = std::max<int64_t>(0, static_cast<int64_t>(std::time(nullptr)) - modified_unix);
  if (s < 120) return std::to_string(s) + " s";
  if (s < 7200) return std::to_string(s / 60) + " min";
  if (s < 172800) return std::to_string(s / 3600) + " h";
  return std::to_string(s / 86400) + " days";
}

std::string FileName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

void RunStatus(bool verbose) {
  store::Spool spool(store::DefaultSpoolDir());
  const std::vector<store::PendingBatch> pending = spool.List();
  std::cout << "spool " << spool.dir() << ": " << pending.size() << " batch(es) pending\n";
  struct Group {
    size_t count = 0;
    uintmax_t bytes = 0;
    int64_t oldest = 0;
    std::vector<const store::PendingBatch*> batches;
  };
  std::map<std::string, Group> by_target;
  for (const store::PendingBatch& b : pending) {
    Group& g = by_target[b.target.Describe()];
    if (g.count == 0 || b.modified_unix < g.oldest) g.oldest = b.modified_unix;
    ++g.count;
    g.bytes += b.bytes;
    g.batches.push_back(&b);
  }
  for (const auto& [target, g] : by_target) {
    std::cout << "  " << target << ": " << g.count << " batch(es), " << g.bytes << " bytes, oldest "
              << Age(g.oldest) << " old"
              << (target == "unknown" ? " (written before batches named their database: "
                                        "`spool replay --target unknown --db ...`)"
                                      : "")
              << "\n";
    for (const store::PendingBatch* b : g.batches) {
      if (verbose || g.batches.size() <= 10) {
        std::cout << "    " << FileName(b->path) << "  " << b->kind << "  " << b->bytes
                  << " bytes  " << Age(b->modified_unix) << "\n";
      }
    }
  }
}

struct ReplayOptions {
  DatabaseOptions database;
  std::optional<std::string> target;  // another target's batches, into --db
};

void RunReplay(const ReplayOptions& o) {
  store::Spool spool(store::DefaultSpoolDir());
  store::SpoolTarget target = app::TargetOf(o.database);
  if (o.target) {
    if (!store::ParseTargetDescription(*o.target, &target)) {
      std::cerr << "fabtrack spool replay: --target " << *o.target
                << ": expected user@host:port/dbname as `spool status` prints it, or unknown\n";
      throw CommandExit{kExitUsage};
    }
  }
  if (spool.Pending(target).empty()) {
    std::cout << "spool " << spool.dir() << ": nothing to replay for " << target.Describe() << "\n";
    return;
  }
  // Opening replays the database's own batches; --target adopts another's.
  app::ReplaySpoolInto(o.database, o.target ? std::optional(target) : std::nullopt, std::cerr);
  const size_t left = spool.Pending(target).size();
  std::cout << "spool " << spool.dir() << ": " << left << " batch(es) of " << target.Describe()
            << " still pending\n";
  if (left > 0) throw CommandExit{kExitDatabaseError};
}

void RunDrop(const std::vector<std::string>& ids, bool yes) {
  store::Spool spool(store::DefaultSpoolDir());
  std::vector<store::PendingBatch> pending = spool.List();
  std::vector<const store::PendingBatch*> chosen;
  for (const std::string& id : ids) {
    const store::PendingBatch* match = nullptr;
    int matches = 0;
    for (const store::PendingBatch& b : pending) {
      if (FileName(b.path).rfind(id, 0) == 0) {
        match = &b;
        ++matches;
      }
    }
    if (matches != 1) {
      std::cerr << "fabtrack spool drop: " << id << ": "
                << (matches == 0 ? "no such batch" : "names more than one batch")
                << " (see `fabtrack spool status --verbose`)\n";
      throw CommandExit{kExitUsage};
    }
    chosen.push_back(match);
  }
  for (const store::PendingBatch* b : chosen) {
    if (!yes) {
      std::cout << "would drop " << FileName(b->path) << " (" << b->kind << " for "
                << b->target.Describe() << ", " << b->bytes << " bytes); its data is lost: "
                << "add --yes to drop it\n";
      continue;
    }
    spool.Remove(b->path);
    std::cout << "dropped " << FileName(b->path) << " (" << b->kind << " for "
              << b->target.Describe() << ")\n";
  }
  if (!yes) throw CommandExit{kExitUsage};
}

}  // namespace

void SetupSpool(CLI::App& app) {
  auto replay_options = std::make_shared<ReplayOptions>();
  CLI::App* spool = app.add_subcommand(
      "spool",
      "Batches kept locally while their database was unavailable ($FABTRACK_SPOOL_DIR, 0700)");
  spool->require_subcommand(1);
  auto verbose = std::make_shared<bool>(false);
  CLI::App* status = spool->add_subcommand("status", "Pending batches by target database");
  status->add_flag("--verbose", *verbose, "every batch, not only the first ten per target");
  status->callback([verbose] { RunStatus(*verbose); });
  CLI::App* replay =
      spool->add_subcommand("replay", "Store the pending batches of --db's database now");
  AddDatabaseOptions(replay, &replay_options->database);
  replay->add_option("--target", replay_options->target,
                     "replay the batches spooled for this target (as `spool status` names it, or "
                     "unknown) into --db's database instead: after a database moved");
  replay->callback([replay_options] { RunReplay(*replay_options); });
  auto ids = std::make_shared<std::vector<std::string>>();
  auto yes = std::make_shared<bool>(false);
  CLI::App* drop = spool->add_subcommand("drop", "Delete pending batches (their data is lost)");
  drop->add_option("ids", *ids, "batch file names or unique prefixes")->required();
  drop->add_flag("--yes", *yes, "really delete them");
  drop->callback([ids, yes] { RunDrop(*ids, *yes); });
}

}  // namespace fabtrack::cli
