// A row for COPY ... FROM STDIN through pqxx::stream_to, with real NULLs.
// libpqxx 6.4 has no std::optional support in stream_to, so each field is a
// (null, text) pair that a string_traits specialisation hands to libpqxx's own
// COPY escaper.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <pqxx/strconv>
#include <string>
#include <vector>

namespace pqxx {
class field;
}  // namespace pqxx

namespace fabtrack::store {

struct CopyField {
  bool null = true;
  std::string text;
};

class CopyRow {
 public:
  CopyRow& Null();
  CopyRow& Text(const std::string& v);
  CopyRow& Text(const std::optional<std::string>& v);
  CopyRow& Int(int64_t v);
  CopyRow& Int(const std::optional<int64_t>& v);
  CopyRow& Int(const std::optional<int>& v);
  CopyRow& Real(double v);
  CopyRow& Real(const std::optional<double>& v);
  CopyRow& Bool(bool v);
  CopyRow& Bool(const std::optional<bool>& v);
  // PostgreSQL array literal of text, e.g. {"a","b"}.
  CopyRow& TextArray(const std::vector<std::string>& v);
  // JSON object of string values.
  CopyRow& JsonObject(const std::map<std::string, std::string>& v);

  const std::vector<CopyField>& fields() const { return fields_; }
  void Clear() { fields_.clear(); }

 private:
  std::vector<CopyField> fields_;

 public:
  std::vector<CopyField>& mutable_fields() { return fields_; }
};

// Shortest text that round-trips the double (NaN/inf as PostgreSQL spells them).
std::string FormatDouble(double v);
std::string PgTextArrayLiteral(const std::vector<std::string>& v);
// "{1,2,3}": ids as one bigint[] parameter.
std::string PgBigintArrayLiteral(const std::vector<int64_t>& ids);
// A text[] column's elements (none for NULL).
std::vector<std::string> PgTextArrayField(const pqxx::field& f);

}  // namespace fabtrack::store

namespace pqxx {
template <>
struct string_traits<fabtrack::store::CopyField> {
  static constexpr const char* name() noexcept { return "fabtrack::store::CopyField"; }
  static constexpr bool has_null() noexcept { return true; }
  static bool is_null(const fabtrack::store::CopyField& f) { return f.null; }
  static fabtrack::store::CopyField null() { return {}; }
  static void from_string(const char str[], fabtrack::store::CopyField& f) {
    f.null = false;
    f.text = str;
  }
  static std::string to_string(const fabtrack::store::CopyField& f) { return f.text; }
};
}  // namespace pqxx
