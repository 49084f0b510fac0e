// fabtrack-allreduce's command line, parsed and validated (harness_options.h)
// by every rank, and by `fabtrack sweep` before it launches any: a bad flag
// is refused before mpirun starts ranks. Pure (CLI11, no MPI).
#pragma once

#include <string>
#include <vector>

#include "collector/harness/harness_options.h"

namespace fabtrack::harness {

struct FaultInjection {
  int exit_after_sizes = -1;  // test hook: this rank exits after N sizes
  int rank = -1;
};

// Parses argv into `o` (all ranks see the same argv). Returns "" on success,
// "help" when help was printed (when `print_help`), else the error message
// naming the flag. `nccl_compiled`: whether --backend nccl is available.
std::string ParseHarnessArgs(int argc, const char* const* argv, HarnessOptions* o,
                             FaultInjection* fault, bool print_help, bool nccl_compiled);

// The benchmark flags `fabtrack sweep` passes through after "--", checked
// as the harness will check them: "" when fine (or only -h), else the error.
std::string CheckHarnessArgs(const std::vector<std::string>& args, bool nccl_compiled);

// argv joined into one shell-quoted line, as a run records it; the value of
// --db is written *** (a conninfo may carry a password).
std::string RecordedCommandLine(int argc, const char* const* argv);

}  // namespace fabtrack::harness
