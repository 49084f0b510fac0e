#include "app/database_admin.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "app/database_access.h"
#include "core/exit_code.h"
#include "store/connection.h"
#include "store/embedded_postgres.h"
#include "store/migrations.h"
#include "store/open_database.h"
#include "store/retention.h"

namespace fabtrack::app {
namespace {

const char* Env(const char* name) { return std::getenv(name); }

MigrationReport ReportOf(const store::MigrateResult& m) {
  return {m.from_version, m.to_version, m.applied};
}

}  // namespace

std::string DescribeTarget(const DatabaseChoice& choice) { return store::DescribeTarget(choice); }

store::SpoolTarget TargetOf(const DatabaseChoice& choice) { return store::TargetOf(choice); }

EmbeddedStart StartEmbedded(const DatabaseChoice& choice, std::ostream& err) {
  store::EmbeddedPostgres server(store::EmbeddedOptionsFor(choice));
  EmbeddedStart out;
  try {
    store::EmbeddedPostgres::StartResult r = server.Start();
    out.initialized = r.initialized;
    out.started = r.started;
    out.root = server.options().root;
    out.conninfo = server.ConnInfo();
    auto connection = store::Connect(server.ConnInfo());
    out.schema = ReportOf(store::Migrate(*connection));
  } catch (const std::exception& e) {
    err << "fabtrack db start: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  return out;
}

EmbeddedState InspectEmbedded(const DatabaseChoice& choice) {
  store::EmbeddedPostgres server(store::EmbeddedOptionsFor(choice));
  EmbeddedState state;
  state.root = server.options().root;
  state.initialized = server.Initialized();
  state.running = server.Running();
  if (state.running) state.conninfo = server.ConnInfo();
  state.targets_embedded =
      store::ResolveConnection(choice.db, Env).origin == store::ConnectionOrigin::kEmbedded;
  return state;
}

bool StopEmbedded(const DatabaseChoice& choice, std::ostream& err) {
  store::EmbeddedPostgres server(store::EmbeddedOptionsFor(choice));
  try {
    return server.Stop();
  } catch (const std::exception& e) {
    err << "fabtrack db stop: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

SchemaState ReadSchemaState(const DatabaseChoice& choice, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kNone, err);
  return {store::SchemaVersion(*connection), store::EmbeddedMigrations().back().version};
}

MigrationReport MigrateSchema(const DatabaseChoice& choice, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kNone, err);
  try {
    return ReportOf(store::Migrate(*connection));
  } catch (const store::SchemaMismatch& e) {
    err << "fabtrack db migrate: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

PruneReport PruneHistory(const DatabaseChoice& choice, const std::string& cutoff_iso,
                         const std::optional<std::string>& cluster, bool apply, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  try {
    pqxx::work txn(*connection);
    store::PruneCounts c = store::PruneBefore(txn, cutoff_iso, cluster, apply);
    txn.commit();
    return {c.runs,
            c.port_counter_samples,
            c.snapshot_port_deltas,
            c.resolved_findings,
            c.analyses,
            c.inspector_jobs,
            c.locate_verdicts,
            c.ab_comparisons,
            c.ras_snapshots,
            c.ras_job_verdicts,
            c.ras_events};
  } catch (const pqxx::sql_error& e) {
    err << "fabtrack db prune: " << DescribeTarget(choice) << ": " << e.what()
        << (std::string(e.what()).find("permission denied") != std::string::npos
                ? "(pruning deletes: connect as the database's owner, not fabtrack_writer)\n"
                : "");
    throw CommandExit{kExitDatabaseError};
  }
}

void ReplaySpoolInto(const DatabaseChoice& choice, const std::optional<store::SpoolTarget>& other,
                     std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  if (other) ReplaySpool(*connection, *other, err, /*adopt=*/true);
}

}  // namespace fabtrack::app
