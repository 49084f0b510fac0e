// One conversation with an NCCL process's RAS thread, for ras_client.h
// (`ras status`) and ras_monitor_client.h (`ras watch`'s event stream):
// non-blocking, every wait a poll() against one deadline, so a RAS thread
// that accepts and then says nothing (a stopped process, a wedged job) costs
// at most the deadline, never a hang. Errors are QueryError naming host:port
// and what was happening.
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

#include "collector/ras/ras_client.h"

namespace fabtrack::ras {

class RasConnection {
 public:
  // `label` follows "RAS at host:port" in every error (" (event stream)");
  // `connect_hint` follows a failed connect.
  RasConnection(const QueryOptions& o, const std::string& label, std::string connect_hint);
  ~RasConnection();
  RasConnection(const RasConnection&) = delete;
  RasConnection& operator=(const RasConnection&) = delete;

  void Connect(const std::string& host, int port);
  void Send(const std::string& line);
  // One answer line, without its newline ("\r" too).
  std::string ReadLine(const std::string& after);
  // Everything until the server closes, under the reply cap.
  std::string ReadToClose();
  // What came after the last line read (a stream's first bytes).
  std::string TakeBuffered() { return std::move(buffer_); }
  // The socket, handed over (the caller closes it).
  int Release();
  [[noreturn]] void Fail(const std::string& what);

 private:
  using Clock = std::chrono::steady_clock;
  bool Receive();
  bool Wait(int fd, short events);
  [[noreturn]] void Stalled(const std::string& when);

  std::string where_;
  std::string connect_hint_;
  Clock::time_point deadline_;
  double deadline_s_;
  size_t cap_;
  int fd_ = -1;
  std::string buffer_;
};

}  // namespace fabtrack::ras
