#include "core/interrupt.h"

#include <csignal>
#include <cstring>
#include <string>

namespace fabtrack {
namespace {

volatile std::sig_atomic_t received = 0;

void OnSignal(int signal) { received = signal; }

}  // namespace

Interrupted::Interrupted(int signal)
    : std::runtime_error(std::string("interrupted by ") +
                         (signal == SIGINT ? "SIGINT" : "SIGTERM")),
      signal_(signal) {}

void InstallInterruptHandlers() {
  struct sigaction action;
  std::memset(&action, 0, sizeof action);
  action.sa_handler = OnSignal;
  sigemptyset(&action.sa_mask);
  // The next one is not a request: a user pressing Ctrl-C twice means it.
  action.sa_flags = SA_RESETHAND;
  // No SA_RESTART: a read or poll blocked in libpq returns EINTR and libpq
  // retries it, so nothing is lost either way.
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

int InterruptSignal() { return received; }

void ThrowIfInterrupted() {
  if (received != 0) throw Interrupted(received);
}

}  // namespace fabtrack
