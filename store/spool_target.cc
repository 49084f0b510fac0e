#include "store/spool_target.h"

#include <libpq-fe.h>

#include <map>

#include "store/connection.h"

namespace fabtrack::store {
namespace {

using Options = std::map<std::string, std::string>;

Options ToMap(PQconninfoOption* options) {
  Options out;
  for (PQconninfoOption* o = options; o != nullptr && o->keyword != nullptr; ++o) {
    if (o->val != nullptr && *o->val != '\0') out[o->keyword] = o->val;
  }
  return out;
}

std::string Get(const Options& o, const char* key) {
  auto it = o.find(key);
  return it == o.end() ? "" : it->second;
}

}  // namespace

std::string SpoolTarget::Describe() const {
  if (Unknown()) return "unknown";
  return user + "@" + host + ":" + port + "/" + dbname;
}

SpoolTarget TargetOfConninfo(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (parsed == nullptr) {
    if (error != nullptr) PQfreemem(error);
    return {RedactConninfo(conninfo), "", "", ""};
  }
  Options given = ToMap(parsed);
  PQconninfoFree(parsed);
  // libpq's defaults: PGHOST, PGPORT, PGDATABASE, PGUSER, else its built-ins.
  PQconninfoOption* defaults = PQconndefaults();
  Options fallback = ToMap(defaults);
  PQconninfoFree(defaults);
  auto pick = [&](const char* key) {
    std::string v = Get(given, key);
    return v.empty() ? Get(fallback, key) : v;
  };
  SpoolTarget t;
  t.host = pick("host");
  if (t.host.empty()) t.host = pick("hostaddr");
  if (t.host.empty()) t.host = "/var/run/postgresql";  // libpq's default socket directory
  t.port = pick("port");
  if (t.port.empty()) t.port = "5432";
  t.user = pick("user");
  t.dbname = pick("dbname");
  if (t.dbname.empty()) t.dbname = t.user;  // libpq's default database is the user's name
  return t;
}

bool ParseTargetDescription(const std::string& text, SpoolTarget* target) {
  if (text == "unknown") {
    *target = SpoolTarget{};
    return true;
  }
  // user@host:port/dbname; a socket directory host holds '/', so split on the
  // first '@' and the last ':' and the first '/' after it.
  const size_t at = text.find('@');
  const size_t colon = text.rfind(':');
  if (at == std::string::npos || colon == std::string::npos || colon < at) return false;
  const size_t slash = text.find('/', colon);
  if (slash == std::string::npos) return false;
  target->user = text.substr(0, at);
  target->host = text.substr(at + 1, colon - at - 1);
  target->port = text.substr(colon + 1, slash - colon - 1);
  target->dbname = text.substr(slash + 1);
  return !target->host.empty() && !target->port.empty() && !target->dbname.empty();
}

}  // namespace fabtrack::store
