// Which database a spooled batch belongs to, named without secrets: the
// host, port, database and user a connection string resolves to, with
// libpq's own defaults (PG* variables, the OS user, the default socket)
// filled in, and without connecting. A batch is only ever replayed into the
// database it was meant for.
#pragma once

#include <string>

namespace fabtrack::store {

struct SpoolTarget {
  std::string host, port, dbname, user;

  bool operator==(const SpoolTarget&) const = default;
  // Batches written before targets were recorded (spool format 1).
  bool Unknown() const { return host.empty() && port.empty() && dbname.empty() && user.empty(); }
  // "fabtrack@db01:5432/fabtrack"; "unknown" for Unknown().
  std::string Describe() const;
};

// The database `conninfo` (key=value or URI; "" = libpq's environment)
// resolves to. An unparsable conninfo gives its text, redacted, as host so
// that it still names one target.
SpoolTarget TargetOfConninfo(const std::string& conninfo);

// Reads Describe()'s form back ("unknown" too); false when malformed.
bool ParseTargetDescription(const std::string& text, SpoolTarget* target);

}  // namespace fabtrack::store
