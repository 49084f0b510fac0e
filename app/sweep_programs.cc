#include "app/sweep_programs.h"

#include <elf.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/bus_bandwidth.h"
#include "core/subprocess.h"
#include "core/text.h"

namespace fabtrack::app {
namespace fs = std::filesystem;

std::optional<std::string> FindAllreduce() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (ec) return std::nullopt;
  for (fs::path candidate : {self.parent_path() / "fabtrack-allreduce",
                             self.parent_path().parent_path() / "app" / "fabtrack-allreduce"}) {
    if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
  }
  return std::nullopt;
}

NcclTestsPrograms FindNcclTestsPrograms(const std::string& dir_arg,
                                        const std::string& collectives) {
  const fs::path dir = fs::absolute(dir_arg);
  auto find = [&](const std::string& collective) -> std::optional<std::string> {
    for (const char* suffix : {"_perf", "_perf_mpi"}) {
      fs::path candidate = dir / (collective + suffix);
      if (access(candidate.c_str(), X_OK) == 0) return candidate.string();
    }
    return std::nullopt;
  };
  NcclTestsPrograms found;
  if (collectives == "all") {
    for (const std::string& c : KnownCollectives()) {
      if (auto path = find(c)) found.programs.push_back({c, *path});
    }
    if (found.programs.empty()) {
      found.problem = "no nccl-tests program (*_perf) in " + dir.string();
    }
    return found;
  }
  std::string list = collectives;
  std::replace(list.begin(), list.end(), ',', ' ');
  std::replace(list.begin(), list.end(), '\t', ' ');
  for (std::string_view word : Split(list, ' ')) {
    if (word.empty()) continue;
    const std::string name(word);
    std::optional<std::string> collective = CanonicalCollective(name);
    if (!collective) {
      found.problem = "--collective " + name + ": not an nccl-tests collective (" +
                      Join(KnownCollectives(), " ") + ", or all)";
      return found;
    }
    std::optional<std::string> path = find(*collective);
    if (!path) {
      found.problem = (dir / (*collective + "_perf")).string() +
                      ": no such program (build nccl-tests there, or fix --nccl-tests-dir)";
      return found;
    }
    found.programs.push_back({*collective, *path});
  }
  return found;
}

bool NcclTestsWriteJson(const std::string& mode, const std::string& program, std::ostream& err) {
  if (mode != "auto") return mode == "on";
  try {
    return RunProcess({program, "-h"}).output.find("--output_file") != std::string::npos;
  } catch (const std::exception& e) {
    err << "fabtrack sweep: " << program << " -h: " << e.what() << "\n";
    return false;
  }
}

std::string NcclLibraryProblem(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0) return dir + ": " + std::strerror(errno);
  if (!S_ISDIR(st.st_mode)) {
    return dir + ": not a folder (give the folder that holds libnccl.so.2)";
  }
  const std::string library = (fs::path(dir) / "libnccl.so.2").string();
  const int fd = open(library.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    return errno == ENOENT ? dir + ": no libnccl.so.2 in this folder"
                           : library + ": " + std::strerror(errno);
  }
  Elf64_Ehdr header{};
  const ssize_t got = read(fd, &header, sizeof header);
  const int read_errno = errno;
  close(fd);
  if (got < 0) return library + ": " + std::strerror(read_errno);
  const bool elf = got == static_cast<ssize_t>(sizeof header) &&
                   std::memcmp(header.e_ident, ELFMAG, SELFMAG) == 0;
  if (!elf) return library + ": not a shared library (no ELF header)";
  Elf64_Ehdr self{};
  if (const int me = open("/proc/self/exe", O_RDONLY | O_CLOEXEC); me >= 0) {
    if (read(me, &self, sizeof self) != static_cast<ssize_t>(sizeof self)) self = {};
    close(me);
  }
  if (header.e_ident[EI_CLASS] != ELFCLASS64 || header.e_type != ET_DYN ||
      (self.e_machine != 0 && header.e_machine != self.e_machine)) {
    return library + ": not a 64-bit shared library for this machine";
  }
  return "";
}

}  // namespace fabtrack::app
