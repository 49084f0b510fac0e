#include "app/input_paths.h"

#include <glob.h>

#include <algorithm>
#include <filesystem>

namespace fabtrack::app {
namespace {

namespace fs = std::filesystem;

bool HasGlobChars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

}  // namespace

bool ExpandInputPaths(const std::vector<std::string>& args, bool walk_folders,
                      std::vector<std::string>* files, std::ostream& err) {
  bool all_matched = true;
  auto add_folder = [&](const std::string& dir) {
    std::vector<std::string> found;
    std::error_code ec;
    auto add = [&](const fs::directory_entry& entry) {
      std::error_code type_ec;
      if (entry.is_regular_file(type_ec)) found.push_back(entry.path().string());
    };
    if (walk_folders) {
      for (auto it = fs::recursive_directory_iterator(dir, ec);
           !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
        add(*it);
      }
    } else {
      for (auto it = fs::directory_iterator(dir, ec); !ec && it != fs::directory_iterator();
           it.increment(ec)) {
        add(*it);
      }
    }
    if (ec) {
      err << dir << ": cannot list folder: " << ec.message() << "\n";
      all_matched = false;
      return;
    }
    if (found.empty()) {
      err << dir << ": folder holds no regular file" << (walk_folders ? " (nor below it)" : "")
          << "\n";
      all_matched = false;
    }
    std::sort(found.begin(), found.end());
    files->insert(files->end(), found.begin(), found.end());
  };
  for (const std::string& arg : args) {
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      add_folder(arg);
      continue;
    }
    if (fs::exists(arg, ec) || !HasGlobChars(arg)) {
      files->push_back(arg);
      continue;
    }
    glob_t g{};
    const int rc = ::glob(arg.c_str(), 0, nullptr, &g);  // glob sorts its matches
    if (rc != 0) {
      err << arg << ": no file matches\n";
      all_matched = false;
    }
    for (size_t i = 0; rc == 0 && i < g.gl_pathc; ++i) {
      const std::string path = g.gl_pathv[i];
      if (fs::is_directory(path, ec)) {
        add_folder(path);
      } else if (fs::is_regular_file(path, ec)) {
        files->push_back(path);
      }
    }
    globfree(&g);
  }
  return all_matched;
}

}  // namespace fabtrack::app
