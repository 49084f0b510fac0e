#include "store/connection.h"

#include <cstdlib>
#include <pqxx/pqxx>

#include "store/conninfo.h"

namespace fabtrack::store {
namespace {

// Variables that make libpq pick a server on its own.
constexpr const char* kLibpqTargetVars[] = {"PGHOST",     "PGHOSTADDR", "PGPORT",
                                            "PGDATABASE", "PGSERVICE",  "PGUSER"};

}  // namespace

ConnectionTarget ResolveConnection(const std::optional<std::string>& flag,
                                   const std::function<const char*(const char*)>& env) {
  if (flag) return {*flag, ConnectionOrigin::kFlag};
  if (const char* v = env("FABTRACK_DB"); v && *v) return {v, ConnectionOrigin::kFabtrackEnv};
  for (const char* var : kLibpqTargetVars) {
    if (const char* v = env(var); v && *v) return {"", ConnectionOrigin::kLibpqEnv};
  }
  return {"", ConnectionOrigin::kEmbedded};
}

std::unique_ptr<pqxx::connection> Connect(const std::string& conninfo) {
  std::string full = conninfo;
  // libpq waits for a server that accepts and never answers forever unless
  // told otherwise; a nightly job must not. The conninfo's own
  // connect_timeout or PGCONNECT_TIMEOUT wins.
  const char* env_timeout = std::getenv("PGCONNECT_TIMEOUT");
  if (full.find("connect_timeout") == std::string::npos &&
      (env_timeout == nullptr || *env_timeout == '\0')) {
    if (IsConninfoUri(full)) {
      full += (full.find('?') == std::string::npos ? "?" : "&");
      full += "connect_timeout=" + std::to_string(kDefaultConnectTimeoutSeconds);
    } else {
      full += (full.empty() ? "" : " ");
      full += "connect_timeout=" + std::to_string(kDefaultConnectTimeoutSeconds);
    }
  }
  if (full.find("application_name") == std::string::npos) {
    if (IsConninfoUri(full)) {
      full += (full.find('?') == std::string::npos ? "?" : "&");
      full += "application_name=fabtrack";
    } else {
      full += (full.empty() ? "" : " ");
      full += "application_name=fabtrack";
    }
  }
  return std::make_unique<pqxx::connection>(full);
}

}  // namespace fabtrack::store
