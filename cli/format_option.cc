#include "cli/commands.h"

namespace fabtrack::cli {

CLI::Option* AddFormatOption(CLI::App* app, std::string* format,
                             const std::vector<std::string>& choices) {
  *format = choices.front();
  std::string help = choices.front() + " (default)";
  for (size_t i = 1; i < choices.size(); ++i) {
    help += (i + 1 == choices.size() ? " or " : ", ") + choices[i];
  }
  return app->add_option("--format", *format, help)->check(CLI::IsMember(choices));
}

}  // namespace fabtrack::cli
