// Turns a parsed file into the runs fabtrack stores. Pure: the caller supplies
// the file's content hash and modification time.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/clock.h"  // NormalizeTimestamp, for --at
#include "core/model.h"
#include "core/run_record.h"

namespace fabtrack {

struct IngestOptions {
  std::string cluster;
  std::optional<std::string> at;  // --at (ISO 8601); else the file's mtime
  std::optional<int> nodes;       // --nodes; else from the file (ingest/node_count.h)
  std::map<std::string, std::string> tags;
};

struct SourceFacts {
  std::string path;
  std::string content_hash;  // SHA-256 of the file's bytes
  std::string modified_at;   // ISO 8601 UTC of the file's mtime
};

// One RunRecord per result table; a file with NCCL log evidence but no table
// becomes one "nccl-log" run (a job's transport evidence without numbers).
// The file's transports, network and NIC list are attached to every run.
std::vector<RunRecord> BuildRunRecords(const ParsedFile& parsed, const SourceFacts& source,
                                       const IngestOptions& options);

// The latency summary of a result row from nccl-tests' per-iteration columns
// (i_min, i_max, i_p50, i_p99, i_cv%; fabtrack-allreduce's p50/p99/CV):
// out-of-place p50/p99/min/max/CV and in-place p50/p99/CV, CV as a ratio.
// Absent columns stay absent. Derived here, once, when the run is built: the
// writers (store, run document) only write what the record holds.
LatencySummary LatencyFromIterationColumns(const SizeRow& row);

// The collective of a table whose output does not name it, from the row
// shape (bytes vs count x type size x ranks, redop and root columns);
// nullopt when the rows do not decide it.
std::optional<std::string> InferCollective(const TestTable& table);
}  // namespace fabtrack
