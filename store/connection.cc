#include "store/connection.h"

#include <cstdlib>
#include <pqxx/pqxx>
#include <regex>

namespace fabtrack::store {
namespace {

// Variables that make libpq pick a server on its own.
constexpr const char* kLibpqTargetVars[] = {"PGHOST",     "PGHOSTADDR", "PGPORT",
                                            "PGDATABASE", "PGSERVICE",  "PGUSER"};

bool IsUri(std::string_view s) {
  return s.starts_with("postgresql://") || s.starts_with("postgres://");
}

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

std::string RedactConninfo(std::string_view conninfo) {
  std::string s(conninfo);
  if (IsUri(s)) {
    // scheme://user:password@host -> scheme://user:***@host
    static const std::regex userinfo(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)");
    s = std::regex_replace(s, userinfo, "$1:***@");
    static const std::regex query_pw(R"(([?&]password=)[^&]*)");
    return std::regex_replace(s, query_pw, "$1***");
  }
  // key=value form; values may be single-quoted with backslash escapes.
  static const std::regex kv_pw(R"((password\s*=\s*)('(?:[^'\\]|\\.)*'|\S+))");
  return std::regex_replace(s, kv_pw, "$1***");
}

bool ConninfoHasPassword(std::string_view conninfo) { return RedactConninfo(conninfo) != conninfo; }

std::unique_ptr<pqxx::connection> Connect(const std::string& conninfo) {
  std::string full = conninfo;
  // libpq waits for a server that accepts and never answers forever unless
  // told otherwise; a nightly job must not. The conninfo's own
  // connect_timeout or PGCONNECT_TIMEOUT wins.
  const char* env_timeout = std::getenv("PGCONNECT_TIMEOUT");
  if (full.find("connect_timeout") == std::string::npos &&
      (env_timeout == nullptr || *env_timeout == '\0')) {
    if (IsUri(full)) {
      full += (full.find('?') == std::string::npos ? "?" : "&");
      full += "connect_timeout=" + std::to_string(kDefaultConnectTimeoutSeconds);
    } else {
      full += (full.empty() ? "" : " ");
      full += "connect_timeout=" + std::to_string(kDefaultConnectTimeoutSeconds);
    }
  }
  if (full.find("application_name") == std::string::npos) {
    if (IsUri(full)) {
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
