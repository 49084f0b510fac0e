#include "app/database_access.h"

#include <algorithm>
#include <cstdlib>
#include <pqxx/except>
#include <pqxx/nontransaction>

#include "core/exit_code.h"
#include "store/spool_replay.h"

namespace fabtrack::app {
namespace {

// What this command found when it could not use its database (one command
// per process, one database per command).
struct SpoolState {
  std::optional<std::string> cause;  // the first failure, as the database or libpq said it
  store::FailureKind kind = store::FailureKind::kOutage;
  int spooled = 0;
  std::string dir;
  std::string instance_id;  // of the database, once connected
};
SpoolState& State() {
  static SpoolState state;
  return state;
}

void NoteFailure(const std::string& cause, store::FailureKind kind) {
  SpoolState& s = State();
  // A misconfiguration outranks an outage seen earlier: it will not pass.
  if (!s.cause ||
      (kind == store::FailureKind::kMisconfiguration && s.kind == store::FailureKind::kOutage)) {
    s.cause = cause;
    s.kind = kind;
  }
}

// What to do about a misconfiguration, from its cause.
std::string FixFor(const std::string& cause) {
  auto has = [&](const char* part) { return cause.find(part) != std::string::npos; };
  if (has("password") || has("authentication")) {
    return "fix the credentials (~/.pgpass, PGPASSFILE or the service file; never on the command "
           "line)";
  }
  if (has("database schema is at version")) return "bring the schema and fabtrack to one version";
  if (has("permission denied") || has("must be owner")) {
    return "grant the role fabtrack_writer (the Ansible role fabtrack_database does), or connect "
           "as a role that has it";
  }
  if (has("role") && has("does not exist")) return "create the role or fix user= in the conninfo";
  if (has("database") && has("does not exist")) {
    return "create the database (then `fabtrack db migrate`) or fix dbname= in the conninfo";
  }
  if (has("pg_hba.conf")) return "allow this host and role in the server's pg_hba.conf";
  return "fix the connection settings";
}

}  // namespace

void ReplaySpool(pqxx::connection& connection, const store::SpoolTarget& target, std::ostream& err,
                 bool adopt) {
  store::Spool spool(store::DefaultSpoolDir());
  if (spool.Pending(target).empty()) return;
  store::ReplayResult r = store::ReplaySpool(spool, connection, target, err, adopt);
  // Another command replayed them while this one waited for the spool.
  if (r.replayed + r.corrupt + r.remaining + r.foreign == 0) return;
  err << "fabtrack: replayed " << r.replayed << " spooled batch(es) of " << target.Describe()
      << " from " << spool.dir();
  if (r.corrupt) err << ", " << r.corrupt << " set aside in " << spool.dir() << "/corrupt";
  if (r.remaining) err << ", " << r.remaining << " still spooled";
  if (r.foreign) err << ", " << r.foreign << " left for another instance of that name";
  err << "\n";
}

namespace {

// The database, or nullptr with the reason in `why` (and noted for
// FinishSpooling).
std::unique_ptr<pqxx::connection> OpenOrNote(const DatabaseOptions& options, SchemaPolicy policy,
                                             std::ostream& err, std::string* why) {
  std::unique_ptr<pqxx::connection> connection;
  try {
    connection = store::OpenDatabase(options, policy, err);
  } catch (const store::UnparsableConninfo& e) {
    // A typo (FABTRACK_DB; --db is checked with the flags): nothing to spool for.
    err << "fabtrack: " << e.what() << "\n";
    throw CommandExit{kExitUsage};
  } catch (const store::DatabaseUnavailable& e) {
    *why = e.what();
    NoteFailure(e.what(), e.kind());
    return nullptr;
  }
  State().instance_id = store::ReadInstanceId(*connection);
  // Replay only into a schema known to be current (`db migrate` and `db
  // status` open an old one on purpose), and only this database's batches:
  // another database's runs never land here.
  if (policy != SchemaPolicy::kRequireCurrent) return connection;
  try {
    ReplaySpool(*connection, store::TargetOf(options), err);
  } catch (const std::exception& e) {
    // The spool stays for the next command; this one goes on.
    err << "fabtrack: spool replay stopped: " << e.what() << "\n";
  }
  return connection;
}

}  // namespace

std::unique_ptr<pqxx::connection> OpenDatabaseOrSpool(const DatabaseOptions& options,
                                                      SchemaPolicy policy, std::ostream& err) {
  // The reason is said once, in FinishSpooling's one line, with what was
  // spooled.
  std::string why;
  return OpenOrNote(options, policy, err, &why);
}

std::unique_ptr<pqxx::connection> OpenDatabaseOrExit(const DatabaseOptions& options,
                                                     SchemaPolicy policy, std::ostream& err) {
  std::string why;
  std::unique_ptr<pqxx::connection> connection = OpenOrNote(options, policy, err, &why);
  if (!connection) {
    err << "fabtrack: " << why << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return connection;
}

void LimitReadTime(pqxx::connection& connection) {
  int seconds = 300;
  if (const char* text = std::getenv("FABTRACK_STATEMENT_TIMEOUT"); text && *text) {
    seconds = std::max(1, std::atoi(text));
  }
  pqxx::nontransaction txn(connection);
  txn.exec0("SET statement_timeout = " + txn.quote(std::to_string(seconds) + "s"));
}

bool ShouldSpoolAfter(const std::exception& e) {
  if (store::IsDatabaseOutage(e)) {
    NoteFailure(e.what(), store::FailureKind::kOutage);
    return true;
  }
  // The role may not write (or the database went away under our role): the
  // data is fine and is kept; someone must fix the grants.
  // By SQLSTATE where libpqxx passes it on (42501 insufficient privilege,
  // 28 authorization, 3D000 no database, 42P01 no such table: a schema not
  // there), else by the server's words.
  std::string state;
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) state = sql->sqlstate();
  if (state == "42501" || state.rfind("28", 0) == 0 || state == "3D000" || state == "42P01" ||
      store::ClassifyDatabaseFailure(e.what()) == store::FailureKind::kMisconfiguration) {
    NoteFailure(e.what(), store::FailureKind::kMisconfiguration);
    return true;
  }
  return false;
}

void SpoolOrExit(store::SpoolBatch batch, const DatabaseOptions& options, std::ostream& err) {
  store::Spool spool(store::DefaultSpoolDir());
  batch.target = store::TargetOf(options);
  batch.instance_id = State().instance_id;
  try {
    spool.Put(batch);  // said once, by FinishSpooling, with the folder
    ++State().spooled;
    State().dir = spool.dir();
  } catch (const store::SpoolError& e) {
    err << "fabtrack: could neither store nor spool: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

std::optional<std::string> MisconfigurationSeen() {
  const SpoolState& s = State();
  if (s.kind != store::FailureKind::kMisconfiguration) return std::nullopt;
  return s.cause;
}

void FinishSpooling(const DatabaseOptions& options, std::ostream& err) {
  const SpoolState& s = State();
  if (s.spooled == 0) return;
  const std::string target = store::TargetOf(options).Describe();
  // libpq's words span lines ("...failed: No such file or directory\n\tIs
  // the server running locally..."): one line here.
  std::string cause;
  for (char c : s.cause.value_or("the database was unavailable")) {
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
    if (c != ' ' || (!cause.empty() && cause.back() != ' ')) cause += c;
  }
  while (!cause.empty() && cause.back() == ' ') cause.pop_back();
  if (s.kind == store::FailureKind::kMisconfiguration) {
    err << "fabtrack: error: " << cause << "; kept in the spool " << s.dir << " (" << s.spooled
        << " batch(es) for " << target << "); " << FixFor(cause)
        << ", then `fabtrack spool replay`\n";
    throw CommandExit{kExitDatabaseError};
  }
  // A long watch that reconnected replayed them (its "replayed" line said
  // so): none left for this database, nothing for the next command to do.
  if (store::Spool(s.dir).Pending(store::TargetOf(options)).empty()) {
    err << "fabtrack: " << target << " was unavailable for a while (" << cause << "); the "
        << s.spooled << " batch(es) spooled meanwhile in " << s.dir
        << " were replayed when it came back\n";
    return;
  }
  err << "fabtrack: warning: " << target << " unavailable (" << cause << "); " << s.spooled
      << " batch(es) spooled in " << s.dir
      << ", stored by the next fabtrack command that reaches it or `fabtrack spool replay`\n";
}

}  // namespace fabtrack::app
