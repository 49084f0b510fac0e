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

bool Contains(const std::string& text, const char* part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

FailureKind ClassifyDatabaseFailure(const std::string& m) {
  // libpq's and the server's words for a refusal that retrying will not
  // change; everything else (refused, timeout, shutting down, starting up,
  // too many clients, no route, name lookup) is an outage.
  for (const char* misconfigured :
       {"password authentication failed", "authentication failed", "no password supplied",
        "password is required", "does not exist", "no pg_hba.conf entry", "permission denied",
        "must be owner", "database schema is at version", "certificate", "SSL is not enabled",
        "server does not support SSL", "invalid connection option", "missing \"=\"", "invalid URI",
        "invalid port number", "is not permitted to log in", "not allowed to connect"}) {
    if (Contains(m, misconfigured)) return FailureKind::kMisconfiguration;
  }
  return FailureKind::kOutage;
}

SpoolTarget TargetOf(const DatabaseChoice& choice) {
  ConnectionTarget target = ResolveConnection(choice.db, Env);
  if (target.origin == ConnectionOrigin::kEmbedded) {
    return TargetOfConninfo(EmbeddedPostgres(EmbeddedOptionsFor(choice)).ConnInfo("fabtrack"));
  }
  return TargetOfConninfo(target.conninfo);
}

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
  if (std::optional<std::string> why = ConninfoParseError(target.conninfo)) {
    throw UnparsableConninfo(DescribeTarget(choice) + ": libpq cannot parse it: " + *why);
  }
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
      // A refusal stays a refusal, and a server that did not answer within
      // connect_timeout has had its chance: retrying either would only make
      // the command wait longer (a nightly job must not hang).
      const std::string what = e.what();
      const bool final = ClassifyDatabaseFailure(what) == FailureKind::kMisconfiguration ||
                         Contains(what, "timeout expired");
      if (attempt >= attempts || final) {
        // libpq's message names host and port, never the password.
        std::string message = "cannot connect to " + DescribeTarget(choice) + " (" +
                              std::to_string(attempt) + " attempt" + (attempt > 1 ? "s" : "") +
                              "): " + what;
        while (!message.empty() && (message.back() == '\n' || message.back() == ' ')) {
          message.pop_back();
        }
        if (Contains(what, "timeout expired")) {
          message +=
              " (the server did not answer within the connect timeout; set "
              "connect_timeout in the conninfo or PGCONNECT_TIMEOUT to change it)";
        }
        throw DatabaseUnavailable(message);
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
