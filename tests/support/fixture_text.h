// A fixture file's whole text, for tests built by fabtrack_test() (which
// defines FABTRACK_FIXTURE_DIR). A missing file fails the test that asked.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

namespace fabtrack::testing {

inline std::string FixtureText(const std::string& relative_path) {
  std::ifstream in(std::string(FABTRACK_FIXTURE_DIR) + "/" + relative_path);
  EXPECT_TRUE(in) << relative_path;
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace fabtrack::testing
