// How the flows reach PostgreSQL: store::OpenDatabase with the spool in
// front (pending batches replayed first), failures turned into exit code 3
// or into spooling, and the command's spool state (one database per
// process). Internal to app/: the CLI calls the flows, never this.
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <pqxx/connection>

#include "core/database_choice.h"
#include "store/open_database.h"
#include "store/spool.h"

namespace fabtrack::app {

using DatabaseOptions = DatabaseChoice;
using store::SchemaPolicy;

// store::OpenDatabase; prints the reason and throws CommandExit{kExitDatabaseError}
// when the database cannot be used (CommandExit{kExitUsage}, in both
// functions, for a conninfo libpq cannot parse: nothing is spooled for it). Before anything else it
// replays what earlier commands spooled while the database was away.
std::unique_ptr<pqxx::connection> OpenDatabaseOrExit(const DatabaseOptions& options,
                                                     SchemaPolicy policy, std::ostream& err);

// For commands that spool: as above, but nullptr when the database cannot
// be used, so the caller spools its batches instead; the reason is said by
// FinishSpooling, in its one line.
std::unique_ptr<pqxx::connection> OpenDatabaseOrSpool(const DatabaseOptions& options,
                                                      SchemaPolicy policy, std::ostream& err);

// Bounds every statement of a reading command (a server that answers the
// connection and then stalls must not hang a report): FABTRACK_STATEMENT_TIMEOUT
// seconds, 300 by default.
void LimitReadTime(pqxx::connection& connection);

// After a write failed: true when the batch should be spooled (the
// database went away, or this role may not write: the data is fine), false
// when the database refused the data itself. Remembers the cause.
bool ShouldSpoolAfter(const std::exception& e);

// Durably spools a batch for the database `options` names (and no other);
// FinishSpooling says how many and where. Throws
// CommandExit{kExitDatabaseError} when even that fails.
void SpoolOrExit(store::SpoolBatch batch, const DatabaseOptions& options, std::ostream& err);

// The first misconfiguration this command met (credentials, database,
// privileges, schema), as the database or libpq said it; nullopt when none
// (nothing failed, or only an outage). A command that has collected nothing
// yet stops on one instead of spooling what it would collect.
std::optional<std::string> MisconfigurationSeen();

// Ends a command that spooled: a misconfiguration (credentials, database,
// privileges, schema) exits kExitDatabaseError with the cause and the fix in
// one message, the data kept; an outage is one warning line and exit 0 (a
// cron job must not fail for it), or, when a reconnect has replayed every
// batch spooled for that database, one line saying so. Nothing when nothing
// was spooled.
void FinishSpooling(const DatabaseOptions& options, std::ostream& err);

// Replays the spooled batches of `target` on an open connection (quietly
// when there are none).
void ReplaySpool(pqxx::connection& connection, const store::SpoolTarget& target, std::ostream& err,
                 bool adopt = false);

}  // namespace fabtrack::app
