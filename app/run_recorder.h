// Rank 0's record of a harness run, kept safe as it grows: after every size
// the JSON result file is rewritten atomically (temp file, fsync, rename) and
// the new rows are stored in the database in their own transaction, so a run
// cut short keeps what it measured and reads as "partial".
#pragma once

#include <memory>
#include <optional>
#include <ostream>
#include <pqxx/connection>
#include <string>

#include "collector/harness/run_sink.h"
#include "core/run_record.h"

namespace fabtrack::app {

class ResultRecorder : public harness::RunSink {
 public:
  // `database` empty: no storing. `output` empty: no result file.
  ResultRecorder(std::optional<DatabaseChoice> database, std::optional<std::string> output,
                 std::ostream& notices);

  // Opens the database before any work, so a bad --db fails fast.
  void Connect() override;
  // Stores the run row (status partial) and writes the first file.
  void Begin(const RunRecord& run) override;
  // rows [first_row, end) of `run` are new.
  void Update(const RunRecord& run, size_t first_row) override;
  void Finish(const RunRecord& run) override;
  std::optional<int64_t> run_id() const override { return run_id_; }

 private:
  void WriteFile(const RunRecord& run);

  std::optional<DatabaseChoice> database_;
  std::optional<std::string> output_;
  std::ostream& notices_;
  std::unique_ptr<pqxx::connection> connection_;
  std::optional<int64_t> run_id_;
};

}  // namespace fabtrack::app
