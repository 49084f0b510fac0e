// `fabtrack ingest`'s flow: expand the paths (app/input_paths), read and
// parse every file (collector/parse), tell fabtrack-allreduce result files
// from nccl-tests outputs and NCCL logs, build the run records
// (collector/ingest) -- all of it before the database is touched, so bad
// input is reported first -- then store each file's runs in one transaction,
// or spool them when the database is away (app/batch_store). The command
// parses the flags and prints what was stored.
#pragma once

#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "collector/ingest/run_builder.h"
#include "core/database_choice.h"
#include "core/run_record.h"
#include "store/spool.h"

namespace fabtrack::app {

struct IngestRequest {
  std::vector<std::string> paths;  // files, folders (walked), quoted globs
  // Separate per-rank NCCL logs (NCCL_DEBUG_FILE) of the job(s) being
  // ingested: their evidence joins every results file of this call.
  std::vector<std::string> nccl_logs;
  IngestOptions options;  // cluster, --at, --nodes, tags
};

// One input file and the runs it holds.
struct PreparedFile {
  std::string path;
  std::vector<RunRecord> runs;
};

struct PreparedIngest {
  std::vector<PreparedFile> files;  // the usable ones, in argument order
  bool input_error = false;         // some path was not usable (reported)
};

// Reads and parses everything; reports every unusable file on `err` (file:
// line, "not stored"). Throws CommandExit{1} when an --nccl-log is unusable
// (nothing of the call may be stored without its evidence).
PreparedIngest PrepareIngest(const IngestRequest& request, std::ostream& err);

// Called for each run of a file once the file is stored (or found stored).
using IngestedRun = std::function<void(const std::string& path, const RunRecord& run,
                                       const store::AppliedBatch& applied)>;

// PrepareIngest, then each file in its own transaction: all of it or
// nothing. When the database cannot take a file (unreachable, or lost
// mid-write), that file and the rest are spooled and stored later. Throws
// CommandExit{1} when no file is usable, or at the end when some were not;
// {3} when the database refused a file or the store's Finish says it is
// misconfigured; Interrupted on SIGINT/SIGTERM (what is committed stays).
void RunIngestFlow(const IngestRequest& request, const DatabaseChoice& database,
                   const IngestedRun& on_stored, std::ostream& err);

}  // namespace fabtrack::app
