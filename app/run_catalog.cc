#include "app/run_catalog.h"

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

std::vector<int64_t> DeleteRuns(const DatabaseChoice& choice, const std::vector<int64_t>& ids,
                                std::ostream& err) {
  auto connection = OpenDatabaseOrExit(choice, SchemaPolicy::kRequireCurrent, err);
  try {
    pqxx::work txn(*connection);
    std::vector<int64_t> deleted = store::DeleteRuns(txn, ids);
    txn.commit();
    return deleted;
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
