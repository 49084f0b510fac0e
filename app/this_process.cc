#include "app/this_process.h"

#include <unistd.h>

#include <filesystem>
#include <system_error>

namespace fabtrack::app {

std::string LocalHostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string SelfPath() {
  std::error_code ec;
  std::filesystem::path self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "fabtrack" : self.string();
}

}  // namespace fabtrack::app
