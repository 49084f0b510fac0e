// The socket edge of `ras watch`'s event stream (NCCL >= 2.29, the MONITOR
// command; the stream's format is ras_monitor.h): "CLIENT PROTOCOL 2" ->
// "SERVER PROTOCOL n", "SET FORMAT json" -> "OK" (text when refused),
// "MONITOR all" -> "OK", then events until the server closes (the process
// ended). A server before 2.29 answers "ERROR: Unknown command MONITOR all"
// and keeps the connection open: that is a refusal, not an error. RAS sends
// nothing while nothing happens (no keep-alive): a quiet stream is normal,
// so every read waits at most what its caller gives it.
#pragma once

#include <memory>
#include <string>

#include "collector/ras/ras_client.h"

namespace fabtrack::ras {

class MonitorConnection {
 public:
  struct Opening {
    bool supported = false;  // the server said OK to MONITOR
    std::string refusal;     // its answer otherwise (NCCL < 2.29: "ERROR: Unknown command ...")
    std::string format;      // "json" or "text": how the events will come
  };
  // Connects and asks for `groups` ("all", "lifecycle", "trace"), all within
  // options.deadline_s. Returns null with `opening->refusal` set when the
  // server does not stream events. Throws QueryError (nothing listens, the
  // peer stalled or broke the protocol).
  static std::unique_ptr<MonitorConnection> Open(const QueryOptions& options,
                                                 const std::string& groups, Opening* opening);
  ~MonitorConnection();
  MonitorConnection(const MonitorConnection&) = delete;
  MonitorConnection& operator=(const MonitorConnection&) = delete;

  enum class Got { kData, kQuiet, kClosed };
  // Waits at most `timeout_ms` for the stream: kData appends what came to
  // `*data`; kQuiet: nothing came; kClosed: the server closed it (or reset
  // it). Never throws.
  Got Read(int timeout_ms, std::string* data);

 private:
  MonitorConnection(int fd, std::string early) : fd_(fd), early_(std::move(early)) {}
  int fd_;
  std::string early_;  // events that came with the handshake's answer
};

}  // namespace fabtrack::ras
