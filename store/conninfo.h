// A connection string as libpq reads it, without connecting: whether libpq
// can parse it at all (a typo is the operator's to fix, not an outage to
// spool through), and how to print it without secrets. Plain libpq
// (libpq-fe.h, in the .cc only): the CLI checks --db with it while parsing
// flags.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace fabtrack::store {

// Whether `conninfo` is a URI (postgresql:// or postgres://), not key=value.
bool IsConninfoUri(std::string_view conninfo);

// libpq's own parser (PQconninfoParse) on `conninfo` (key=value or URI):
// nullopt when it parses, else libpq's reason ("invalid connection option
// \"hostt\""), which names keywords, never values. "" is libpq's
// environment and parses.
std::optional<std::string> ConninfoParseError(const std::string& conninfo);

// The conninfo fit for messages and logs: the value of every secret keyword
// (password, sslpassword: libpq marks them) and of every keyword libpq does
// not know (`passwrd=hunter2` -> `passwrd=***`: a misspelt password is still
// a password) is replaced by ***, as is a URI's user password and a word
// without "=". Known keywords keep their values.
std::string RedactConninfo(std::string_view conninfo);

// True when the string carries a password (we warn: use ~/.pgpass or PGPASSFILE).
bool ConninfoHasPassword(std::string_view conninfo);

}  // namespace fabtrack::store
