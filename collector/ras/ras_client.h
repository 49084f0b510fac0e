// The socket edge of `fabtrack ras status`: one query of an NCCL process's
// RAS thread (localhost:28028 by default), in its text protocol
// (src/ras/client.cc of NCCL): "CLIENT PROTOCOL 2" -> "SERVER PROTOCOL n",
// "TIMEOUT s" -> "OK", "SET FORMAT json" -> "OK" (2.28.7+; anything else: the
// text report), then "VERBOSE STATUS" or "STATUS"; the reply runs until the
// server closes. Non-blocking, under one deadline for connect, handshake and
// the whole reply, with a cap on the reply's size.
#pragma once

#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>

namespace fabtrack::ras {

// The cap on one reply (and on a saved report `ras read` takes). NCCL
// prints a JSON report at ~540 bytes a rank (a 131,072-rank communicator:
// 71 MB), so this holds ~990,000 rank entries (one communicator of 2^20
// ranks nearly, or 8 of 131,072); the text report of as many is ~20 times
// smaller. The reply is held as text and read into the report without a
// DOM (ras_json_parser.cc), so a reply stopped at the cap costs the cap and
// little more (BENCHMARKS.md, "RAS reports of big jobs").
inline constexpr size_t kMaxReplyBytes = size_t{512} << 20;

struct QueryOptions {
  std::string host = "localhost";
  int port = 28028;
  // Seconds for everything: connect, handshake and the whole reply.
  double deadline_s = 15;
  // RAS's own gathering timeout (the TIMEOUT command, ncclras -t); 0: not sent.
  int gather_timeout_s = 10;
  bool verbose = true;  // VERBOSE STATUS names ranks when up to half are off
  bool json = false;    // ask SET FORMAT json; fall back to text if refused
  size_t max_reply_bytes = kMaxReplyBytes;
};

struct Reply {
  std::string body;             // the report, as the server sent it
  std::string format;           // "json" or "text" (what the server agreed to)
  std::string server_protocol;  // "2"
  std::string format_refusal;   // the server's answer to SET FORMAT, when not OK
};

// Why a query got no whole reply: nothing listens, the peer stalled past the
// deadline, it closed early or broke the protocol, or the reply passed the
// cap. The message names host:port and what was happening.
class QueryError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws QueryError.
Reply Query(const QueryOptions& options);

// The host name of a node address as RAS prints it (an IP address), by a
// reverse lookup (getnameinfo: /etc/hosts, then DNS, within the resolver's
// own timeouts), cut at its first dot; an address that is already a name is
// its own host. Nullopt when nothing names it. `ras watch`'s last resort,
// after what the caller knows (a hosts file, Slurm's node list).
std::optional<std::string> LookUpHost(const std::string& address);

}  // namespace fabtrack::ras
