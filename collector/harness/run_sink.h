// Where rank 0's record of a harness run goes as it grows: the JSON result
// file and, with --cluster, the database. The harness only knows this
// interface; the composition root (app/allreduce_entry.cc) supplies the
// recorder that writes files and stores rows (app/run_recorder.h), so the
// collector never includes the store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <ostream>
#include <string>

#include "core/database_choice.h"
#include "core/run_record.h"

namespace fabtrack::harness {

class RunSink {
 public:
  virtual ~RunSink() = default;
  // Opens the database before any work, so a bad --db fails fast.
  virtual void Connect() = 0;
  // Stores the run row (status partial) and writes the first file.
  virtual void Begin(const RunRecord& run) = 0;
  // Rows [first_row, end) of `run` are new.
  virtual void Update(const RunRecord& run, size_t first_row) = 0;
  virtual void Finish(const RunRecord& run) = 0;
  virtual std::optional<int64_t> run_id() const = 0;
};

// `database` unset: no storing. `output` unset: no result file.
using RunSinkFactory = std::function<std::unique_ptr<RunSink>(
    std::optional<DatabaseChoice> database, std::optional<std::string> output,
    std::ostream& notices)>;

// fabtrack-allreduce's whole program after MPI_Init: options, measurement,
// table, record. Returns this rank's exit code.
int RunHarness(int argc, char** argv, const RunSinkFactory& make_sink);

}  // namespace fabtrack::harness
