// Exit codes of every fabtrack command, so that cron jobs and Slurm epilogues
// can act on them, and the exception that ends a command with one. Thrown by
// the application layer (app/) and the CLI; caught once, in cli/main.cc.
#pragma once

namespace fabtrack {

enum ExitCode : int {
  kExitOk = 0,
  kExitInputError = 1,     // a file or value could not be used; nothing of it was stored
  kExitUsage = 2,          // bad flags
  kExitDatabaseError = 3,  // database unreachable, refused the write, or wrong schema
  kExitInternal = 4,
};

// Ends the command with `code` after the message has been printed.
struct CommandExit {
  int code;
};

}  // namespace fabtrack
