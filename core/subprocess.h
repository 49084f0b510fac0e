// Runs a program and waits for it, optionally as another (unprivileged) user.
// Used to drive PostgreSQL's initdb/pg_ctl; never goes through a shell, so no
// argument is ever re-parsed.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

struct ProcessResult {
  int exit_code = -1;  // 128+signal when killed by a signal
  std::string output;  // stdout and stderr together (truncated to 64 KiB)
};

// argv[0] must be an absolute path. When `run_as_user` is set the child drops
// to that user's uid/gid (the caller must be root). Throws std::runtime_error
// when the program cannot be started at all.
ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::optional<std::string>& run_as_user = std::nullopt);

}  // namespace fabtrack

namespace fabtrack {

// Runs argv (argv[0] looked up in PATH) with this process's stdin/stdout/
// stderr, so its output streams to the user, and returns its exit code
// (128+signal when killed). Throws std::runtime_error if it cannot start.
int RunAttached(const std::vector<std::string>& argv);

// RunAttached whose output (stdout and stderr of the program, merged in the
// order it wrote them) also goes, byte for byte, to the file `transcript`
// (created or truncated): the user watches the run while the file keeps what
// a parser needs (a benchmark's table and the NCCL log lines it printed).
// Throws std::runtime_error when the file cannot be written or the program
// cannot start.
int RunAttachedWithTranscript(const std::vector<std::string>& argv, const std::string& transcript);

}  // namespace fabtrack
