// Runs a shell command line for end-to-end tests, capturing stdout, stderr
// and the exit code.
#pragma once

#include <string>

namespace fabtrack::testing {

struct CommandOutput {
  int exit_code = -1;
  std::string out, err;
};

CommandOutput RunCommand(const std::string& command_line);
std::string ReadFileOrEmpty(const std::string& path);

}  // namespace fabtrack::testing
