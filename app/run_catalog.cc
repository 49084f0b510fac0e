#include "app/run_catalog.h"

#include <algorithm>
#include <pqxx/pqxx>
#include <stdexcept>

#include "app/database_access.h"
#include "core/exit_code.h"
#include "store/ab_store.h"
#include "store/inspector_writer.h"
#include "store/retention.h"
#include "store/run_reader.h"

namespace fabtrack::app {

std::vector<store::RunSummary> ListRuns(const DatabaseChoice& choice,
                                        const store::RunFilter& filter, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  LimitReadTime(*connection);
  return store::ListRuns(*connection, filter);
}

std::vector<store::AbSummary> ListAbComparisons(const DatabaseChoice& choice,
                                                const store::RunFilter& filter, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  LimitReadTime(*connection);
  return store::ListAbComparisons(*connection, filter.cluster, filter.limit);
}

std::optional<nlohmann::json> ReadRunDetail(const DatabaseChoice& choice, int64_t run_id,
                                            std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  LimitReadTime(*connection);
  return store::ReadRunDetail(*connection, run_id);
}

RunDeletion DeleteRuns(const DatabaseChoice& choice, const std::vector<int64_t>& ids, bool apply,
                       std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  try {
    pqxx::work txn(*connection);
    RunDeletion deletion;
    deletion.found = store::ExistingRuns(txn, ids);
    for (int64_t id : ids) {
      if (std::find(deletion.found.begin(), deletion.found.end(), id) == deletion.found.end()) {
        deletion.missing.push_back(id);
      }
    }
    // All or nothing: one id that is not there (a typo) deletes none.
    if (!apply || !deletion.missing.empty()) return deletion;
    store::DeleteRuns(txn, deletion.found);
    txn.commit();
    deletion.deleted = true;
    return deletion;
  } catch (const pqxx::sql_error& e) {
    err << "fabtrack runs delete: " << e.what();
    throw CommandExit{kExitDatabaseError};
  }
}

bool StoreInspectorJob(const DatabaseChoice& choice, const std::string& cluster,
                       const InspectorJob& job, const std::string& source_path, std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  try {
    pqxx::work txn(*connection);
    bool stored = store::WriteInspectorJob(txn, cluster, job, source_path);
    txn.commit();
    return stored;
  } catch (const pqxx::failure& e) {
    throw std::runtime_error(e.what());
  }
}

}  // namespace fabtrack::app
