// Reading result rows into plain structs: one column into one field by the
// field's type, so a reader lists its fields once, in the SELECT's order,
// instead of a line of row[i].as<T>() per column.
#pragma once

#include <charconv>
#include <optional>
#include <pqxx/pqxx>
#include <string>
#include <type_traits>
#include <vector>

#include "store/copy_row.h"

namespace fabtrack::store {

template <typename T>
std::optional<T> Get(const pqxx::field& f) {
  if (f.is_null()) return std::nullopt;
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    // libpqxx 6.4 converts numbers through iostreams; a year of history is
    // ~10^6 numbers, so parse the text directly.
    T value{};
    const char* text = f.c_str();
    auto [end, ec] = std::from_chars(text, text + f.size(), value);
    if (ec != std::errc() || end != text + f.size()) return f.as<T>();
    return value;
  } else {
    return f.as<T>();
  }
}

template <typename T>
T Must(const pqxx::field& f) {
  return Get<T>(f).value();
}

// One column into one field, by the field's type: std::optional<T> takes
// NULL (Get), a text[] is TextArray's, std::string and bool must not be NULL
// (as<>), numbers must not be NULL (Must).
template <typename T>
constexpr bool kIsOptional = false;
template <typename T>
constexpr bool kIsOptional<std::optional<T>> = true;

template <typename T>
void ReadField(const pqxx::field& f, T* out) {
  if constexpr (kIsOptional<T>) {
    *out = Get<typename T::value_type>(f);
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    *out = PgTextArrayField(f);
  } else if constexpr (std::is_same_v<T, std::string> || std::is_same_v<T, bool>) {
    *out = f.as<T>();
  } else {
    *out = Must<T>(f);
  }
}

// A column that may be NULL into a plain field: NULL reads as T{}.
template <typename T>
struct OrZero {
  T* field;
};

template <typename T>
void ReadField(const pqxx::field& f, OrZero<T> out) {
  *out.field = Get<T>(f).value_or(T{});
}

// Columns `first`, `first` + 1, ... of `row` into `fields`, in the SELECT's order.
template <typename... Fields>
void ReadColumns(const pqxx::row& row, int first, Fields... fields) {
  int column = first;
  (ReadField(row[column++], fields), ...);
}

}  // namespace fabtrack::store
