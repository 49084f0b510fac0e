#include "store/copy_row.h"

#include <charconv>
#include <cmath>
#include <pqxx/pqxx>
#include <tuple>

#include "core/json_instances.h"

namespace fabtrack::store {

std::string FormatDouble(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, end);
}

std::string PgTextArrayLiteral(const std::vector<std::string>& v) {
  std::string out = "{";
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += '"';
    for (char c : v[i]) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  out += '}';
  return out;
}

CopyRow& CopyRow::Null() {
  fields_.push_back({});
  return *this;
}
CopyRow& CopyRow::Text(const std::string& v) {
  fields_.push_back({false, v});
  return *this;
}
CopyRow& CopyRow::Text(const std::optional<std::string>& v) { return v ? Text(*v) : Null(); }
CopyRow& CopyRow::Int(int64_t v) {
  fields_.push_back({false, std::to_string(v)});
  return *this;
}
CopyRow& CopyRow::Int(const std::optional<int64_t>& v) { return v ? Int(*v) : Null(); }
CopyRow& CopyRow::Int(const std::optional<int>& v) {
  return v ? Int(static_cast<int64_t>(*v)) : Null();
}
CopyRow& CopyRow::Real(double v) {
  fields_.push_back({false, FormatDouble(v)});
  return *this;
}
CopyRow& CopyRow::Real(const std::optional<double>& v) { return v ? Real(*v) : Null(); }
CopyRow& CopyRow::Bool(bool v) {
  fields_.push_back({false, v ? "t" : "f"});
  return *this;
}
CopyRow& CopyRow::Bool(const std::optional<bool>& v) { return v ? Bool(*v) : Null(); }
CopyRow& CopyRow::TextArray(const std::vector<std::string>& v) {
  fields_.push_back({false, PgTextArrayLiteral(v)});
  return *this;
}
CopyRow& CopyRow::JsonObject(const std::map<std::string, std::string>& v) {
  nlohmann::json j = nlohmann::json::object();
  for (const auto& [k, val] : v) j[k] = val;
  // Invalid UTF-8 in a hostile label must not abort the write: replace it.
  fields_.push_back({false, j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
  return *this;
}

std::string PgBigintArrayLiteral(const std::vector<int64_t>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + std::to_string(ids[i]);
  return out + "}";
}

std::vector<std::string> PgTextArrayField(const pqxx::field& f) {
  std::vector<std::string> out;
  if (f.is_null()) return out;
  pqxx::array_parser parser = f.as_array();
  for (auto [kind, value] = parser.get_next(); kind != pqxx::array_parser::done;
       std::tie(kind, value) = parser.get_next()) {
    if (kind == pqxx::array_parser::string_value) out.push_back(value);
  }
  return out;
}

}  // namespace fabtrack::store
