#include "tests/support/run_command.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace fabtrack::testing {

std::string ReadFileOrEmpty(const std::string& path) {
  std::ifstream in(path);
  return std::string((std::istreambuf_iterator<char>(in)), {});
}

CommandOutput RunCommand(const std::string& command_line) {
  static std::atomic<int> counter{0};
  std::string base =
      ::testing::TempDir() + "/cmd_" + std::to_string(getpid()) + "_" + std::to_string(counter++);
  int status = std::system((command_line + " >" + base + ".out 2>" + base + ".err").c_str());
  CommandOutput r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, ReadFileOrEmpty(base + ".out"),
                  ReadFileOrEmpty(base + ".err")};
  std::filesystem::remove(base + ".out");
  std::filesystem::remove(base + ".err");
  return r;
}

}  // namespace fabtrack::testing
