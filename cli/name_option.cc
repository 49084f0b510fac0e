#include <algorithm>
#include <cctype>

#include "cli/commands.h"

namespace fabtrack::cli {

CLI::Validator NameValue() {
  return CLI::Validator(
      [](const std::string& value) -> std::string {
        auto space = [](unsigned char c) { return std::isspace(c) != 0; };
        if (std::all_of(value.begin(), value.end(), space)) {
          return "'" + value + "' is empty: give a name";
        }
        if (space(value.front()) || space(value.back())) {
          return "'" + value + "' has a space at its start or end";
        }
        if (std::any_of(value.begin(), value.end(), [](unsigned char c) { return c < 0x20; })) {
          return "a name has no control characters";
        }
        return "";
      },
      "NAME", "name");
}

}  // namespace fabtrack::cli
