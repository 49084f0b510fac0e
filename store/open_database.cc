#include "store/open_database.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <pqxx/pqxx>
#include <random>
#include <thread>

#include "store/connection.h"
#include "store/migrations.h"

namespace fabtrack::store {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

// FABTRACK_CONNECT_ATTEMPTS (default 4, at least 1).
int ConnectAttempts() {
  const char* text = Env("FABTRACK_CONNECT_ATTEMPTS");
  if (text == nullptr || *text == '\0') return 4;
  int n = std::atoi(text);
  return n < 1 ? 1 : n;
}

}  // namespace

EmbeddedOptions EmbeddedOptionsFor(const DatabaseChoice& choice) {
  EmbeddedOptions e = DefaultEmbeddedOptions(Env);
  if (choice.data_dir) e.root = *choice.data_dir;
  return e;
}

std::string DescribeTarget(const DatabaseChoice& choice) {
  ConnectionTarget target = ResolveConnection(choice.db, Env);
  switch (target.origin) {
    case ConnectionOrigin::kFlag:
      return "--db " + RedactConninfo(target.conninfo);
    case ConnectionOrigin::kFabtrackEnv:
      return "FABTRACK_DB " + RedactConninfo(target.conninfo);
    case ConnectionOrigin::kLibpqEnv:
      return "libpq environment (PG* variables)";
    case ConnectionOrigin::kEmbedded:
      return "embedded PostgreSQL at " +
             EmbeddedPostgres(EmbeddedOptionsFor(choice)).options().root;
  }
  return "?";
}

std::unique_ptr<pqxx::connection> OpenDatabase(const DatabaseChoice& choice, SchemaPolicy policy,
                                               std::ostream& notices) {
  ConnectionTarget target = ResolveConnection(choice.db, Env);
  if (ConninfoHasPassword(target.conninfo)) {
    notices << "fabtrack: warning: the connection string carries a password; it is visible to "
               "other users in the process list. Use ~/.pgpass, PGPASSFILE or a service file "
               "instead.\n";
  }
  std::string conninfo = target.conninfo;
  const bool embedded = target.origin == ConnectionOrigin::kEmbedded;
  if (embedded) {
    try {
      EmbeddedPostgres server(EmbeddedOptionsFor(choice));
      EmbeddedPostgres::StartResult started = server.Start();
      if (started.started || started.initialized) {
        notices << "fabtrack: no database configured (--db, FABTRACK_DB, PG*); "
                << (started.initialized ? "created and started" : "started")
                << " the embedded PostgreSQL in " << server.options().root
                << " (stop it with `fabtrack db stop`)\n";
      }
      conninfo = server.ConnInfo();
    } catch (const std::exception& e) {
      throw DatabaseUnavailable(std::string("cannot start the embedded database: ") + e.what());
    }
  }
  // Many collectors start at once after a night's run, and a server may be
  // restarting: a few retries with exponential backoff and full jitter
  // spread them out before the caller falls back to its spool.
  std::unique_ptr<pqxx::connection> connection;
  const int attempts = ConnectAttempts();
  std::mt19937 rng(std::random_device{}());
  for (int attempt = 1;; ++attempt) {
    try {
      connection = Connect(conninfo);
      break;
    } catch (const std::exception& e) {
      if (attempt >= attempts) {
        // libpq's message names host and port, never the password.
        throw DatabaseUnavailable("cannot connect to " + DescribeTarget(choice) + " (" +
                                  std::to_string(attempts) + " attempts): " + e.what());
      }
      const double cap_ms = 200.0 * (1 << std::min(attempt - 1, 6));
      std::uniform_real_distribution<double> jitter(0.0, cap_ms);
      std::this_thread::sleep_for(std::chrono::duration<double, std::milli>(jitter(rng)));
    }
  }
  try {
    if (embedded) {
      Migrate(*connection);
    } else if (policy == SchemaPolicy::kRequireCurrent) {
      RequireCurrentSchema(*connection);
    }
  } catch (const std::exception& e) {
    throw DatabaseUnavailable(e.what());
  }
  return connection;
}

}  // namespace fabtrack::store
