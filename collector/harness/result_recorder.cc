#include "collector/harness/result_recorder.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <pqxx/pqxx>
#include <stdexcept>

#include "core/run_record_json.h"
#include "store/run_writer.h"

namespace fabtrack::harness {

void WriteFileAtomically(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(errno));
  size_t done = 0;
  while (done < content.size()) {
    ssize_t n = write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      close(fd);
      unlink(tmp.c_str());
      throw std::runtime_error("cannot write " + tmp + ": " + std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  if (fsync(fd) != 0 || close(fd) != 0) {
    unlink(tmp.c_str());
    throw std::runtime_error("cannot sync " + tmp + ": " + std::strerror(errno));
  }
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    unlink(tmp.c_str());
    throw std::runtime_error("cannot rename to " + path + ": " + std::strerror(errno));
  }
}

ResultRecorder::ResultRecorder(std::optional<store::DatabaseChoice> database,
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

}  // namespace fabtrack::harness
