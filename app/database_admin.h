// `fabtrack db` and `fabtrack spool replay` as flows: the embedded server's
// life, the schema's version and migrations, and replaying another target's
// spooled batches. Results are plain structs; the CLI prints them. Failures
// print their reason to `err` and throw CommandExit{kExitDatabaseError}.
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "core/database_choice.h"
#include "store/spool_target.h"

namespace fabtrack::app {

// Where the connection goes, without secrets ("embedded: /var/lib/...").
std::string DescribeTarget(const DatabaseChoice& choice);
// The target spooled batches for `choice` are bound to.
store::SpoolTarget TargetOf(const DatabaseChoice& choice);

struct MigrationReport {
  int from_version = 0, to_version = 0;
  std::vector<std::string> applied;  // "001_initial", ...
};

struct EmbeddedStart {
  bool initialized = false, started = false;
  std::string root, conninfo;
  MigrationReport schema;
};
EmbeddedStart StartEmbedded(const DatabaseChoice& choice, std::ostream& err);

struct EmbeddedState {
  std::string root;
  bool initialized = false, running = false;
  std::string conninfo;           // when running
  bool targets_embedded = false;  // the choice resolves to this server
};
EmbeddedState InspectEmbedded(const DatabaseChoice& choice);
// Returns false when it was not running.
bool StopEmbedded(const DatabaseChoice& choice, std::ostream& err);

struct SchemaState {
  int have = 0, want = 0;
};
// The configured database's schema version next to this binary's (no
// migration, no replay).
SchemaState ReadSchemaState(const DatabaseChoice& choice, std::ostream& err);
MigrationReport MigrateSchema(const DatabaseChoice& choice, std::ostream& err);

// What `db prune` removes (or, in a dry run, would remove).
struct PruneReport {
  int64_t runs = 0, port_counter_samples = 0, snapshot_port_deltas = 0, resolved_findings = 0,
          analyses = 0, inspector_jobs = 0, locate_verdicts = 0, ab_comparisons = 0,
          ras_snapshots = 0, ras_job_verdicts = 0, ras_events = 0;
};
// History older than `cutoff_iso`, of `cluster` or of all; deleted in one
// transaction when `apply`, else only counted.
PruneReport PruneHistory(const DatabaseChoice& choice, const std::string& cutoff_iso,
                         const std::optional<std::string>& cluster, bool apply, std::ostream& err);

// Opens `choice` (which replays its own batches), then, when `other` is set,
// replays the batches spooled for that target into it as well (the operator
// named it: `spool replay --target`).
void ReplaySpoolInto(const DatabaseChoice& choice, const std::optional<store::SpoolTarget>& other,
                     std::ostream& err);

}  // namespace fabtrack::app
