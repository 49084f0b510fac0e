#include "core/subprocess.h"

#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>

namespace fabtrack {

ProcessResult RunProcess(const std::vector<std::string>& argv,
                         const std::optional<std::string>& run_as_user) {
  if (argv.empty() || argv[0].empty() || argv[0][0] != '/') {
    throw std::runtime_error("RunProcess needs an absolute program path");
  }
  struct passwd* pw = nullptr;
  if (run_as_user) {
    pw = getpwnam(run_as_user->c_str());
    if (pw == nullptr) throw std::runtime_error("no such user: " + *run_as_user);
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  std::vector<char*> c_argv;
  for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);

  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    dup2(pipe_fds[1], STDOUT_FILENO);
    dup2(pipe_fds[1], STDERR_FILENO);
    int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, STDIN_FILENO);
    if (pw != nullptr) {
      if (initgroups(pw->pw_name, pw->pw_gid) != 0 || setgid(pw->pw_gid) != 0 ||
          setuid(pw->pw_uid) != 0) {
        dprintf(STDERR_FILENO, "cannot switch to user %s: %s\n", pw->pw_name, strerror(errno));
        _exit(126);
      }
      setenv("HOME", pw->pw_dir, 1);
      setenv("USER", pw->pw_name, 1);
      setenv("LOGNAME", pw->pw_name, 1);
    }
    // A user's working directory may be unreadable to the target user.
    if (chdir("/") != 0) _exit(126);
    execv(c_argv[0], c_argv.data());
    dprintf(STDERR_FILENO, "cannot run %s: %s\n", c_argv[0], strerror(errno));
    _exit(127);
  }
  close(pipe_fds[1]);
  ProcessResult result;
  char buf[4096];
  while (true) {
    ssize_t n = read(pipe_fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    if (result.output.size() < 65536) result.output.append(buf, static_cast<size_t>(n));
  }
  close(pipe_fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) {
    result.exit_code = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.exit_code = 128 + WTERMSIG(status);
  }
  return result;
}

}  // namespace fabtrack

namespace fabtrack {

namespace {

// Starts argv (argv[0] looked up in PATH) with this process's stdin, and its
// stdout and stderr on `output_fd` unless that is -1. Returns once the program
// runs; throws, the child reaped, when it cannot start.
pid_t Start(const std::vector<std::string>& argv, int output_fd) {
  if (argv.empty()) throw std::runtime_error("RunAttached: empty command");
  std::vector<char*> c_argv;
  for (const auto& a : argv) c_argv.push_back(const_cast<char*>(a.c_str()));
  c_argv.push_back(nullptr);
  int error_pipe[2];
  if (pipe2(error_pipe, O_CLOEXEC) != 0) {
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  fflush(nullptr);
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    if (output_fd >= 0) {
      // One descriptor for both streams keeps their interleaving as written.
      dup2(output_fd, STDOUT_FILENO);
      dup2(output_fd, STDERR_FILENO);
    }
    execvp(c_argv[0], c_argv.data());
    int err = errno;
    (void)!write(error_pipe[1], &err, sizeof err);
    _exit(127);
  }
  close(error_pipe[1]);
  // The pipe closes on a successful exec (CLOEXEC); a failed one writes errno.
  int exec_errno = 0;
  ssize_t n = read(error_pipe[0], &exec_errno, sizeof exec_errno);
  close(error_pipe[0]);
  if (n == static_cast<ssize_t>(sizeof exec_errno)) {
    while (waitpid(pid, nullptr, 0) < 0 && errno == EINTR) {
    }
    throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(exec_errno));
  }
  return pid;
}

// Waits for `pid`: its exit code, 128+signal when killed.
int Wait(pid_t pid) {
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 1;
}

}  // namespace

int RunAttached(const std::vector<std::string>& argv) { return Wait(Start(argv, -1)); }

int RunAttachedWithTranscript(const std::vector<std::string>& argv, const std::string& transcript) {
  if (argv.empty()) throw std::runtime_error("RunAttachedWithTranscript: empty command");
  const int file = open(transcript.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (file < 0) throw std::runtime_error(transcript + ": " + std::strerror(errno));
  int output_pipe[2];
  if (pipe2(output_pipe, O_CLOEXEC) != 0) {
    close(file);
    throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  }
  pid_t pid = -1;
  try {
    pid = Start(argv, output_pipe[1]);
  } catch (...) {
    close(output_pipe[0]);
    close(output_pipe[1]);
    close(file);
    throw;
  }
  close(output_pipe[1]);
  // Copy until the program (and every child holding the pipe) is done. A
  // full disk stops the copy to the file, not the program (its output still
  // reaches the terminal); the failure is reported when it ends.
  bool file_ok = true;
  char buffer[1 << 16];
  for (;;) {
    ssize_t got = read(output_pipe[0], buffer, sizeof buffer);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    for (ssize_t done = 0; done < got;) {
      ssize_t w = write(STDOUT_FILENO, buffer + done, got - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) break;
      done += w;
    }
    for (ssize_t done = 0; file_ok && done < got;) {
      ssize_t w = write(file, buffer + done, got - done);
      if (w < 0 && errno == EINTR) continue;
      if (w <= 0) file_ok = false;
      done += w;
    }
  }
  close(output_pipe[0]);
  const bool closed = close(file) == 0;
  const int code = Wait(pid);
  if (!file_ok || !closed) throw std::runtime_error(transcript + ": write failed");
  return code;
}

}  // namespace fabtrack
