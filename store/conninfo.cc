#include "store/conninfo.h"

#include <libpq-fe.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "core/pattern.h"

namespace fabtrack::store {
namespace {

// The keywords this libpq knows whose values may be shown: all but those it
// marks secret ("*": password, sslpassword).
const std::set<std::string, std::less<>>& ShowableKeywords() {
  static const std::set<std::string, std::less<>> keywords = [] {
    std::set<std::string, std::less<>> out;
    PQconninfoOption* defaults = PQconndefaults();
    for (PQconninfoOption* o = defaults; o != nullptr && o->keyword != nullptr; ++o) {
      if (o->dispchar == nullptr || std::strchr(o->dispchar, '*') == nullptr) {
        out.insert(o->keyword);
      }
    }
    PQconninfoFree(defaults);
    // A URI's alias for sslmode=require (libpq's conninfo_uri_parse_params).
    out.insert("ssl");
    return out;
  }();
  return keywords;
}

bool Showable(std::string_view keyword) { return ShowableKeywords().contains(keyword); }

bool Space(char c) {
  return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v';
}

// key=value form, as libpq tokenises it: spaces around "=", values bare
// (backslash escapes) or single-quoted (backslash escapes inside).
std::string RedactKeyValues(std::string_view s) {
  std::string out;
  size_t i = 0;
  while (i < s.size()) {
    if (Space(s[i])) {
      out += s[i++];
      continue;
    }
    const size_t key_start = i;
    while (i < s.size() && !Space(s[i]) && s[i] != '=') ++i;
    const std::string_view key = s.substr(key_start, i - key_start);
    size_t after_key = i;
    while (after_key < s.size() && Space(s[after_key])) ++after_key;
    if (after_key >= s.size() || s[after_key] != '=') {
      // A word without "=": libpq refuses it; it may be a value typed apart.
      out += Showable(key) ? key : std::string_view("***");
      continue;
    }
    i = after_key + 1;
    while (i < s.size() && Space(s[i])) ++i;
    out += s.substr(key_start, i - key_start);  // key, "=", the spaces around it
    const size_t value_start = i;
    if (i < s.size() && s[i] == '\'') {
      for (++i; i < s.size() && s[i] != '\''; ++i) {
        if (s[i] == '\\') ++i;
      }
      if (i < s.size()) ++i;  // the closing quote
    } else {
      for (; i < s.size() && !Space(s[i]); ++i) {
        if (s[i] == '\\') ++i;
      }
    }
    i = std::min(i, s.size());
    if (Showable(key)) {
      out += s.substr(value_start, i - value_start);
    } else if (i > value_start) {
      out += "***";
    }
  }
  return out;
}

std::string RedactUri(std::string s) {
  // scheme://user:password@host -> scheme://user:***@host
  static const Pattern userinfo(R"(^(postgres(?:ql)?://[^:/@?]*):[^@/?]*@)");
  s = userinfo.ReplaceAll(s, "$1:***@");
  const size_t query = s.find('?');
  if (query == std::string::npos) return s;
  std::string out = s.substr(0, query);
  size_t i = query;
  while (i < s.size()) {
    out += s[i++];  // '?' or '&'
    const size_t end = std::min(s.find('&', i), s.size());
    const std::string_view param = std::string_view(s).substr(i, end - i);
    const size_t eq = param.find('=');
    const std::string_view key = param.substr(0, eq);
    if (eq == std::string_view::npos) {
      out += Showable(key) ? param : std::string_view("***");
    } else {
      out += key;
      out += '=';
      out += Showable(key) ? param.substr(eq + 1) : std::string_view("***");
    }
    i = end;
  }
  return out;
}

}  // namespace

bool IsConninfoUri(std::string_view conninfo) {
  return conninfo.starts_with("postgresql://") || conninfo.starts_with("postgres://");
}

std::optional<std::string> ConninfoParseError(const std::string& conninfo) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(conninfo.c_str(), &error);
  if (parsed != nullptr) {
    PQconninfoFree(parsed);
    return std::nullopt;
  }
  std::string why = error != nullptr ? error : "libpq cannot parse it";
  if (error != nullptr) PQfreemem(error);
  while (!why.empty() && (why.back() == '\n' || why.back() == ' ')) why.pop_back();
  return why;
}

std::string RedactConninfo(std::string_view conninfo) {
  return IsConninfoUri(conninfo) ? RedactUri(std::string(conninfo)) : RedactKeyValues(conninfo);
}

bool ConninfoHasPassword(std::string_view conninfo) {
  static const Pattern password(R"((^|[\s?&])password\s*=)");
  const std::string text(conninfo);
  if (password.Search(text)) return true;
  static const Pattern userinfo(R"(^postgres(?:ql)?://[^:/@?]*:[^@/?]*@)");
  return IsConninfoUri(conninfo) && userinfo.Search(text);
}

}  // namespace fabtrack::store
