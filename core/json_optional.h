// std::optional to JSON: the value, or null. Absent stays absent in every
// JSON fabtrack writes.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>

namespace fabtrack {

template <typename T>
nlohmann::json OptionalJson(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace fabtrack
