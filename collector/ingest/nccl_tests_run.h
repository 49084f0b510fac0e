// From what one nccl-tests program printed (and the -J report it wrote) when
// `fabtrack sweep --bench nccl-tests` launched it, to the runs fabtrack
// stores. Pure: the caller reads the files.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/run_record.h"

namespace fabtrack {

struct NcclTestsLaunch {
  std::string collective;  // the program's ("all_gather" for all_gather_perf)
  int nodes = 0;           // as launched
  int expected_ranks = 0;  // launched processes x -g x -t
  std::string cluster;
  std::string launched_at;  // ISO 8601 UTC: the run's time
  std::string command_line;
  std::string sweep_id;
  std::map<std::string, std::string> tags;
  int exit_code = 0;
  std::string transcript_path;  // everything the launcher printed: table + NCCL log
  std::string transcript;
  std::optional<std::string> json_path;  // the -J report, when one was written
  std::optional<std::string> json;
};

struct NcclTestsRuns {
  // One run per result table (nccl-tests -N prints one per cycle); a program
  // that printed NCCL's log but no table is one failed run holding the log's
  // evidence (the night's benchmark died: that is a finding, not nothing).
  std::vector<RunRecord> runs;
  // "file:line: message", warnings and the reasons nothing is stored.
  std::vector<std::string> problems;
};

// Empty `runs` with a problem when the output is not this launch's: no table
// and no log, or a table of another rank count (a binary built without MPI
// under mpirun prints one 1-rank table per process) or another collective.
// The -J report's table is taken over the printed one (more digits), with
// the printed log's evidence; a report that does not parse falls back to the
// printed table, with a warning. A table of several cycles (-N) keeps the
// last one, the count in parameters["cycles"].
NcclTestsRuns BuildNcclTestsRuns(const NcclTestsLaunch& launch);

}  // namespace fabtrack
