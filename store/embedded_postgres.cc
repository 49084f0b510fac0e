#include "store/embedded_postgres.h"

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <stdexcept>

#include "core/content_hash.h"
#include "core/subprocess.h"

namespace fabtrack::store {
namespace fs = std::filesystem;
namespace {

// sockaddr_un.sun_path holds 108 bytes; leave room for "/.s.PGSQL.NNNNN".
constexpr size_t kMaxSocketDirLength = 90;

bool UserExists(const char* name) { return getpwnam(name) != nullptr; }

std::string Tail(const std::string& text, size_t max_chars = 2000) {
  return text.size() <= max_chars ? text : "..." + text.substr(text.size() - max_chars);
}

void ChownTo(const std::string& path, const std::optional<std::string>& user) {
  if (!user) return;
  struct passwd* pw = getpwnam(user->c_str());
  if (pw == nullptr) throw std::runtime_error("no such user: " + *user);
  if (chown(path.c_str(), pw->pw_uid, pw->pw_gid) != 0) {
    throw std::runtime_error("chown " + path + ": " + std::strerror(errno));
  }
}

void MakePrivateDir(const std::string& path, const std::optional<std::string>& user) {
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw std::runtime_error("cannot create " + path + ": " + ec.message());
  if (chmod(path.c_str(), 0700) != 0) {
    throw std::runtime_error("chmod " + path + ": " + std::strerror(errno));
  }
  ChownTo(path, user);
}

// Holds an exclusive flock on a file for the lifetime of the object.
class FileLock {
 public:
  explicit FileLock(const std::string& path) {
    fd_ = open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
    if (fd_ < 0) throw std::runtime_error("cannot open lock " + path + ": " + std::strerror(errno));
    while (flock(fd_, LOCK_EX) != 0) {
      if (errno != EINTR) throw std::runtime_error("flock " + path + ": " + std::strerror(errno));
    }
  }
  ~FileLock() { close(fd_); }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace

EmbeddedOptions DefaultEmbeddedOptions(const EnvLookup& env) {
  EmbeddedOptions options;
  const bool root = geteuid() == 0;
  if (const char* dir = env("FABTRACK_DATA_DIR"); dir && *dir) {
    options.root = dir;
  } else if (root) {
    // /root is 0700: the unprivileged server user could not reach a data dir there.
    options.root = "/var/lib/fabtrack/postgres";
  } else if (const char* xdg = env("XDG_DATA_HOME"); xdg && *xdg) {
    options.root = std::string(xdg) + "/fabtrack/postgres";
  } else if (const char* home = env("HOME"); home && *home) {
    options.root = std::string(home) + "/.local/share/fabtrack/postgres";
  } else {
    throw std::runtime_error("cannot choose a data directory: set FABTRACK_DATA_DIR or HOME");
  }
  const char* bin = env("FABTRACK_PG_BINDIR");
  options.bin_dir = (bin && *bin) ? bin : FABTRACK_DEFAULT_PG_BINDIR;
  if (root) {
    if (const char* user = env("FABTRACK_PG_USER"); user && *user) {
      options.run_as_user = user;
    } else if (UserExists("fabtrack")) {
      options.run_as_user = "fabtrack";
    } else if (UserExists("postgres")) {
      options.run_as_user = "postgres";
    } else {
      throw std::runtime_error(
          "running as root and no unprivileged user for PostgreSQL: create a system user "
          "'fabtrack' (useradd --system fabtrack) or set FABTRACK_PG_USER");
    }
  }
  return options;
}

EmbeddedPostgres::EmbeddedPostgres(EmbeddedOptions options) : options_(std::move(options)) {
  std::error_code ec;
  fs::path root = fs::absolute(options_.root, ec);
  options_.root = root.lexically_normal().string();
  socket_dir_ = options_.root + "/run";
  if (socket_dir_.size() > kMaxSocketDirLength) {
    // Deterministic, so every fabtrack process finds the same socket.
    socket_dir_ = "/tmp/fabtrack-" + Sha256Hex(options_.root).substr(0, 16);
  }
}

std::string EmbeddedPostgres::DataDir() const { return options_.root + "/data"; }
std::string EmbeddedPostgres::LogFile() const { return options_.root + "/postgresql.log"; }
std::string EmbeddedPostgres::Tool(const char* name) const {
  std::string path = options_.bin_dir + "/" + name;
  if (access(path.c_str(), X_OK) != 0) {
    throw std::runtime_error(path +
                             " not found: install postgresql-15 (scripts/install-deps.sh) "
                             "or set FABTRACK_PG_BINDIR");
  }
  return path;
}

bool EmbeddedPostgres::Initialized() const { return fs::exists(DataDir() + "/PG_VERSION"); }

int EmbeddedPostgres::PgCtlStatus() const {
  return RunProcess({Tool("pg_ctl"), "status", "-D", DataDir()}, options_.run_as_user).exit_code;
}

bool EmbeddedPostgres::Running() const { return Initialized() && PgCtlStatus() == 0; }

std::string EmbeddedPostgres::ConnInfo(const std::string& dbname) const {
  return "host=" + socket_dir_ + " port=" + std::to_string(options_.port) + " dbname=" + dbname +
         " user=fabtrack";
}

void EmbeddedPostgres::PrepareDirectories() {
  MakePrivateDir(options_.root, options_.run_as_user);
  MakePrivateDir(socket_dir_, options_.run_as_user);
}

void EmbeddedPostgres::InitDb() {
  ProcessResult r = RunProcess({Tool("initdb"), "-D", DataDir(), "-U", "fabtrack", "-E", "UTF8",
                                "--no-locale", "--auth-local=trust", "--auth-host=reject"},
                               options_.run_as_user);
  if (r.exit_code != 0) {
    throw std::runtime_error("initdb failed (exit " + std::to_string(r.exit_code) + "):\n" +
                             Tail(r.output));
  }
  // Unix socket only, in a private directory: trust auth is safe because only
  // the owner (and root) can reach the socket.
  std::ofstream conf(DataDir() + "/postgresql.conf", std::ios::app);
  conf << "\n# fabtrack embedded defaults\n"
       << "listen_addresses = ''\n"
       << "unix_socket_directories = '" << socket_dir_ << "'\n"
       << "unix_socket_permissions = 0700\n"
       << "port = " << options_.port << "\n"
       << "max_connections = 200\n"
       << "logging_collector = off\n";
  if (!conf) throw std::runtime_error("cannot write " + DataDir() + "/postgresql.conf");
}

void EmbeddedPostgres::EnsureDatabase() {
  pqxx::connection c(ConnInfo("postgres"));
  pqxx::nontransaction txn(c);
  auto r = txn.exec("SELECT 1 FROM pg_database WHERE datname = 'fabtrack'");
  if (r.empty()) txn.exec0("CREATE DATABASE fabtrack");
}

EmbeddedPostgres::StartResult EmbeddedPostgres::Start() {
  StartResult result;
  {
    std::error_code ec;
    fs::create_directories(options_.root, ec);
  }
  FileLock lock(options_.root + "/.fabtrack-lock");
  PrepareDirectories();
  if (!Initialized()) {
    InitDb();
    result.initialized = true;
  }
  if (PgCtlStatus() != 0) {
    // The log file must be writable by the server user.
    int fd = open(LogFile().c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
    if (fd >= 0) close(fd);
    ChownTo(LogFile(), options_.run_as_user);
    ProcessResult r =
        RunProcess({Tool("pg_ctl"), "start", "-D", DataDir(), "-l", LogFile(), "-w", "-t", "60"},
                   options_.run_as_user);
    if (r.exit_code != 0) {
      std::ifstream log(LogFile());
      std::string log_text((std::istreambuf_iterator<char>(log)), {});
      throw std::runtime_error("pg_ctl start failed (exit " + std::to_string(r.exit_code) +
                               "): " + Tail(r.output) + "\nserver log " + LogFile() + ":\n" +
                               Tail(log_text));
    }
    result.started = true;
  }
  EnsureDatabase();
  return result;
}

bool EmbeddedPostgres::Stop() {
  if (!Initialized() || PgCtlStatus() != 0) return false;
  ProcessResult r = RunProcess({Tool("pg_ctl"), "stop", "-D", DataDir(), "-m", "fast", "-w"},
                               options_.run_as_user);
  if (r.exit_code != 0) {
    throw std::runtime_error("pg_ctl stop failed: " + Tail(r.output));
  }
  return true;
}

}  // namespace fabtrack::store
