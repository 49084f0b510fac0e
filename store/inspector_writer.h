// Stores an Inspector job summary (core/inspector_job.h).
#pragma once

#include <pqxx/transaction_base>
#include <string>

#include "core/inspector_job.h"

namespace fabtrack::store {

// Inserts the job and its collectives in `txn`. A job already stored for the
// cluster (same job id) is left as it is: returns false, writes nothing.
bool WriteInspectorJob(pqxx::transaction_base& txn, const std::string& cluster,
                       const InspectorJob& job, const std::string& source_path);

}  // namespace fabtrack::store
