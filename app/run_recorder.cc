#include "app/run_recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <pqxx/pqxx>
#include <stdexcept>

#include "core/atomic_file.h"
#include "core/run_record_json.h"
#include "store/open_database.h"
#include "store/run_writer.h"

namespace fabtrack::app {

ResultRecorder::ResultRecorder(std::optional<DatabaseChoice> database,
                               std::optional<std::string> output, std::ostream& notices)
    : database_(std::move(database)), output_(std::move(output)), notices_(notices) {}

void ResultRecorder::Connect() {
  if (!database_) return;
  connection_ = store::OpenDatabase(*database_, store::SchemaPolicy::kRequireCurrent, notices_);
}

void ResultRecorder::WriteFile(const RunRecord& run) {
  if (!output_) return;
  WriteFileAtomically(*output_, RunRecordToJson(run).dump(1) + "\n");
}

void ResultRecorder::Begin(const RunRecord& run) {
  WriteFile(run);
  if (connection_) {
    pqxx::work txn(*connection_);
    run_id_ = store::BeginRun(txn, run);
    txn.commit();
  }
}

void ResultRecorder::Update(const RunRecord& run, size_t first_row) {
  WriteFile(run);
  if (connection_ && run_id_) {
    pqxx::work txn(*connection_);
    store::AppendResults(txn, *run_id_, run, first_row);
    txn.commit();
  }
}

void ResultRecorder::Finish(const RunRecord& run) {
  WriteFile(run);
  if (connection_ && run_id_) {
    pqxx::work txn(*connection_);
    store::FinishRun(txn, *run_id_, run);
    txn.commit();
  }
}

}  // namespace fabtrack::app
