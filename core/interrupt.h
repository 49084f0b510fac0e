// Ctrl-C and SIGTERM as a request, not a kill. The handler only records the
// signal; loops that write to the database ask ThrowIfInterrupted() between
// rows, so an open transaction is rolled back by unwinding (a run is stored
// whole or not at all) and the command says what was and was not stored
// before it exits 128 + signal (130, 143), as a shell reports it.
#pragma once

#include <stdexcept>

namespace fabtrack {

class Interrupted : public std::runtime_error {
 public:
  explicit Interrupted(int signal);
  int signal() const { return signal_; }
  int exit_code() const { return 128 + signal_; }

 private:
  int signal_;
};

// Installs the SIGINT/SIGTERM handlers (once; a second signal while the
// first is handled kills the process the default way).
void InstallInterruptHandlers();

// The signal received, or 0.
int InterruptSignal();

// Throws Interrupted when a signal was received.
void ThrowIfInterrupted();

}  // namespace fabtrack
