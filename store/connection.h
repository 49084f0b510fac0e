// Which database a command talks to, and opening the connection.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <pqxx/connection>
#include <string>
#include <string_view>

#include "store/conninfo.h"  // RedactConninfo, ConninfoParseError

namespace fabtrack::store {

enum class ConnectionOrigin {
  kFlag,         // --db
  kFabtrackEnv,  // FABTRACK_DB
  kLibpqEnv,     // PGHOST, PGDATABASE, PGSERVICE, ... (libpq reads them itself)
  kEmbedded,     // nothing configured: the private embedded server
};

struct ConnectionTarget {
  std::string conninfo;  // empty for kLibpqEnv and kEmbedded (filled by the caller)
  ConnectionOrigin origin = ConnectionOrigin::kEmbedded;
};

// Precedence: --db, then FABTRACK_DB, then libpq's PG* variables when any is
// set, then the embedded default. Pure: `env` is injected.
ConnectionTarget ResolveConnection(const std::optional<std::string>& flag,
                                   const std::function<const char*(const char*)>& env);

// connect_timeout added to a conninfo that has none (and no PGCONNECT_TIMEOUT).
inline constexpr int kDefaultConnectTimeoutSeconds = 10;

// Opens a connection with application_name=fabtrack unless one is given, and
// connect_timeout=10 unless the conninfo or PGCONNECT_TIMEOUT sets one.
std::unique_ptr<pqxx::connection> Connect(const std::string& conninfo);

}  // namespace fabtrack::store
