#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <limits>

#include "cli/commands.h"

namespace fabtrack::cli {

CLI::Validator WholeNumber(int64_t min, int64_t max) {
  return CLI::Validator(
      [min, max](std::string& input) -> std::string {
        int64_t value = 0;
        const char* end = input.data() + input.size();
        const auto [stop, error] = std::from_chars(input.data(), end, value);
        if (error == std::errc::result_out_of_range ||
            (error == std::errc() && stop == end && value > max)) {
          const bool negative = !input.empty() && input[0] == '-';
          return input + " is out of range (at " + (negative ? "least " : "most ") +
                 std::to_string(negative ? min : max) + ")";
        }
        if (error != std::errc() || stop != end) return "expected a whole number, got " + input;
        if (value < min) return "must be at least " + std::to_string(min) + ", got " + input;
        return "";
      },
      min == 1 ? "POSITIVE" : "INT", "whole number");
}

CLI::Validator PositiveAmount() {
  return CLI::Validator(
      [](std::string& input) -> std::string {
        char* stop = nullptr;
        errno = 0;
        const double value = std::strtod(input.c_str(), &stop);
        if (input.empty() || *stop != '\0' || errno == ERANGE || !std::isfinite(value)) {
          return "expected a number, got " + input;
        }
        if (value <= 0) return "must be more than 0, got " + input;
        return "";
      },
      "POSITIVE", "positive amount");
}

CLI::Validator PositiveCount() { return WholeNumber(1, std::numeric_limits<int>::max()); }

CLI::Validator StoredId() { return WholeNumber(1, std::numeric_limits<int64_t>::max()); }

}  // namespace fabtrack::cli
