// The database side of the spool: writing one batch, and replaying the
// spooled batches of a target in order (store/spool.h keeps the files).
#pragma once

#include <exception>
#include <ostream>
#include <pqxx/connection>
#include <pqxx/transaction_base>
#include <string>

#include "store/spool.h"

namespace fabtrack::store {

// Writes one batch in the caller's transaction: the path collectors use when
// the database is there, and the replay's when it comes back.
AppliedBatch ApplyBatch(pqxx::transaction_base& txn, const SpoolBatch& batch);

struct ReplayResult {
  int replayed = 0;   // committed and removed
  int corrupt = 0;    // quarantined
  int remaining = 0;  // still pending (the database failed again)
  int foreign = 0;    // left pending: spooled for another instance of this name
};

// This database's fabtrack_instance id (migration 008), or "" when it has
// none or this role may not read it.
std::string ReadInstanceId(pqxx::connection_base& connection);

// Whether an exception from a write means the database went away (connection
// lost, server shutting down, commit outcome unknown) rather than that it
// refused the data: an outage is spooled and waited out, a refusal is an error.
bool IsDatabaseOutage(const std::exception& e);

// Replays the pending batches of `target` in order into `connection` (which
// must be that database, or one the operator named with `spool replay
// --target`), one transaction each, stopping at the first database failure
// so that order is kept. Other targets' batches are not touched. Progress
// goes to `log`.
// A batch that recorded an instance id other than this database's is left
// pending and counted as foreign, unless `adopt` (the operator named the
// target with `spool replay --target`).
ReplayResult ReplaySpool(const Spool& spool, pqxx::connection_base& connection,
                         const SpoolTarget& target, std::ostream& log, bool adopt = false);

}  // namespace fabtrack::store
