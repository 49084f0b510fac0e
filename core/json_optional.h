// std::optional to JSON: the value, or null. Absent stays absent in every
// JSON fabtrack writes.
#pragma once

#include <optional>

#include "core/json_instances.h"

namespace fabtrack {

template <typename T>
nlohmann::json OptionalJson(const std::optional<T>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json(nullptr);
}

}  // namespace fabtrack
