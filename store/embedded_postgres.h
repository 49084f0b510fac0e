// The embedded default database: a private PostgreSQL server in a data
// directory, reachable only through a unix socket in a 0700 directory. Drives
// the stock initdb/pg_ctl binaries; run as root, the server runs as an
// unprivileged system user (PostgreSQL refuses root).
#pragma once

#include <functional>
#include <optional>
#include <string>

namespace fabtrack::store {

struct EmbeddedOptions {
  std::string root;                        // holds data/, run/ (socket), postgresql.log
  std::string bin_dir;                     // initdb, pg_ctl, postgres
  std::optional<std::string> run_as_user;  // set when we are root
  int port = 5432;                         // only names the socket file; there is no TCP listener
};

using EnvLookup = std::function<const char*(const char*)>;

// Defaults from the environment: root = $FABTRACK_DATA_DIR, else (root user)
// /var/lib/fabtrack/postgres, else $XDG_DATA_HOME/fabtrack/postgres or
// ~/.local/share/fabtrack/postgres; bin_dir = $FABTRACK_PG_BINDIR or the build
// default; run_as_user = $FABTRACK_PG_USER, else "fabtrack" or "postgres"
// when running as root.
EmbeddedOptions DefaultEmbeddedOptions(const EnvLookup& env);

class EmbeddedPostgres {
 public:
  explicit EmbeddedPostgres(EmbeddedOptions options);

  struct StartResult {
    bool initialized = false;  // initdb ran now
    bool started = false;      // was not running before
  };
  // Initializes (first time), starts, and creates the "fabtrack" database.
  // Safe to call concurrently from several processes (file lock).
  StartResult Start();
  // Returns false when it was not running.
  bool Stop();
  bool Initialized() const;
  bool Running() const;

  // libpq conninfo for the fabtrack database on the private socket.
  std::string ConnInfo(const std::string& dbname = "fabtrack") const;
  const std::string& SocketDir() const { return socket_dir_; }
  std::string DataDir() const;
  std::string LogFile() const;
  const EmbeddedOptions& options() const { return options_; }

 private:
  std::string Tool(const char* name) const;
  void PrepareDirectories();
  void InitDb();
  void EnsureDatabase();
  int PgCtlStatus() const;

  EmbeddedOptions options_;
  std::string socket_dir_;
};

}  // namespace fabtrack::store
