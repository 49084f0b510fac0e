// One event of NCCL's RAS monitoring stream (NCCL >= 2.29: the `MONITOR`
// command, `ncclras -m`), as plain data that crosses from the collector
// (collector/ras/ras_monitor.h reads the stream) to the store (schema 026)
// and the analyzer (`ras watch`'s verdict: a PEER_DEAD names a dead process
// at once, where STATUS says so only after RAS's 60 s). RAS names processes
// by IP address; `host` is what fabtrack mapped that address to.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace fabtrack {

struct RasEvent {
  // As RAS printed it: "2025-12-19 13:07:07", the RAS node's local time
  // (strftime "%F %T" of localtime_r, no zone); empty when not given.
  std::string event_time;
  // When fabtrack read it (RFC 3339, UTC): the time the verdict uses, since
  // the node's zone is not on the wire.
  std::string received_at;
  std::string group;   // LIFECYCLE or TRACE (JSON says; text: from the event's name); "" unknown
  std::string event;   // PEER_DEAD, PEER_NEW, PEER_UNRESPONSIVE...; kept whatever it is
  bool known = false;  // one of the events NCCL 2.29-2.30 sends
  std::string node;    // the peer's IP address; empty when the event names none
  std::string port;    // the peer's RAS port, when RAS knew only its address ("10.1.0.7<36871>")
  std::string host;    // the host fabtrack mapped `node` to; empty when unknown
  std::optional<int64_t> pid;
  std::string gpus;     // "1", "0,1", "1 (NVML 3)"; empty when unknown
  std::string details;  // "peer not responding for 5s (keepalive warning)"; often empty
  std::string format;   // "json" or "text": how the stream was read
  std::string raw;      // the line or JSON object as received (without its newline)
  int line = 0;         // its first line in the stream, from 1
  bool operator==(const RasEvent&) const = default;
};

}  // namespace fabtrack
