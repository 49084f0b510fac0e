// The fake hosts of tests/fixtures/node/generate.sh, generated at test time
// (they are full of symlinks, like /sys) into one temporary directory per
// test process, each host on first use, and removed at exit.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>
#include <stdexcept>
#include <string>

namespace fabtrack::testing {

class NodeFixtures : public ::testing::Environment {
 public:
  static std::string Sys(const std::string& host) { return Host(host) + "/sys"; }
  static std::string Proc(const std::string& host) { return Host(host) + "/proc"; }

  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(Dir(), ec);
  }

 private:
  static const std::string& Dir() {
    static const std::string dir =
        ::testing::TempDir() + "/fabtrack_node_" + std::to_string(::getpid());
    return dir;
  }

  // Only the hosts a test uses: ctest runs every test in its own process.
  static std::string Host(const std::string& host) {
    static std::set<std::string> generated;
    if (generated.insert(host).second) {
      std::string cmd =
          "sh '" + std::string(FABTRACK_FIXTURE_DIR) + "/node/generate.sh' '" + Dir() + "' " + host;
      if (std::system(cmd.c_str()) != 0) throw std::runtime_error("failed: " + cmd);
    }
    return Dir() + "/" + host;
  }
};

inline ::testing::Environment* const kNodeFixtures =
    ::testing::AddGlobalTestEnvironment(new NodeFixtures);

}  // namespace fabtrack::testing
