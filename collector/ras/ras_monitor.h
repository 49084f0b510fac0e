// NCCL's RAS event stream (NCCL >= 2.29): after "MONITOR [groups]" -> "OK",
// the RAS thread sends one event per change it sees until the process ends
// (src/ras/client_support.cc, rasClientsNotifyEvent). Two formats:
//  - text, one line per event:
//      [2025-12-19 13:07:07] PEER_DEAD: Process 1524345 on node 172.16.64.245 managing GPU 1
//    the peer as "Process P on node IP managing GPU[s] G[ (NVML N)]", or as
//    "IP<port>" when RAS does not know the process, or absent; then the
//    details (often empty, leaving a trailing blank);
//  - JSON (after SET FORMAT json), one pretty-printed object per event, the
//    objects one after the other with nothing between them but newlines:
//      {"timestamp", "group": LIFECYCLE|TRACE, "event", "peer": {"host",
//       "pid", "cuda_devs": [..], "nvml_devs": [..]} or {"addr"}, "details"}
// The events: LIFECYCLE PEER_NEW, PEER_DEAD; TRACE PEER_CONNECTING,
// PEER_CONNECTED, PEER_RECOVERED, PEER_DISCONNECTED, PEER_UNRESPONSIVE,
// PEER_RETRY, PEER_TIMEOUT_DEAD, PEER_SEND_STUCK, PEER_INIT_TIMEOUT,
// PEER_KEEPALIVE_TIMEOUT. Others (a later NCCL) are kept, marked unknown.
// Pure: the socket edge is ras_client.h.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "core/ras_event.h"

namespace fabtrack::ras {

struct MonitorBatch {
  std::vector<RasEvent> events;
  std::vector<std::string> problems;  // "line 12: ..." for what could not be read
};

// Reads the stream as it comes, in chunks cut anywhere (mid-line, mid-object):
// what a chunk leaves unfinished waits for the next. Never throws; a line or
// object it cannot read is a problem naming its line, and reading goes on
// after it. An event longer than 64 KiB is a problem and skipped.
class MonitorParser {
 public:
  // "json" or "text": what the server agreed to (SET FORMAT json).
  explicit MonitorParser(std::string format) : format_(std::move(format)) {}

  // Adds what the events and problems completed by `chunk` to `out`.
  void Feed(std::string_view chunk, MonitorBatch* out);
  // The stream ended: an unfinished line or object is a problem ("cut off").
  void Finish(MonitorBatch* out);

  const std::string& format() const { return format_; }

 private:
  void TextLine(std::string_view line, int number, MonitorBatch* out);
  void JsonObject(std::string_view text, int number, MonitorBatch* out);

  std::string format_;
  std::string pending_;  // the unfinished line (text) or object (JSON)
  int line_ = 1;         // the line number of pending_'s first character
  int pending_line_ = 0;
  // JSON: where the scan of pending_ stands.
  size_t scanned_ = 0;
  int depth_ = 0;
  bool in_string_ = false, escaped_ = false;
  bool skipping_ = false;  // past the size cap: drop until the line's (or object's) end
  std::string junk_;       // JSON: what stands between objects on this line
  int problem_total_ = 0;
};

// The whole stream at once (a saved capture): Feed then Finish.
MonitorBatch ParseMonitorStream(std::string_view text, const std::string& format);

// The group NCCL 2.29-2.30 sends an event in ("LIFECYCLE", "TRACE"), "" for
// an event it does not send.
const char* MonitorEventGroup(std::string_view event);

}  // namespace fabtrack::ras
