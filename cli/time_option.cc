#include <chrono>

#include "cli/commands.h"

namespace fabtrack::cli {

CLI::Validator OperatorTimeValue(OperatorTimeRules rules, const CLI::Option* allow_future) {
  return CLI::Validator(
      [rules, allow_future](std::string& value) -> std::string {
        OperatorTimeRules in_force = rules;
        // Read from the parsed command line (not the flag's variable, which is
        // set in declaration order), so the flag may come anywhere.
        if (allow_future != nullptr && allow_future->count() > 0) {
          in_force.refuse_far_future = false;
        }
        const double now =
            std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch())
                .count();
        OperatorTime time = ParseOperatorTime(value, in_force, now);
        if (!time.iso) {
          return time.why + (time.far_future && allow_future != nullptr
                                 ? "; " + allow_future->get_name() + " if it is meant"
                                 : "");
        }
        value = *time.iso;
        return "";
      },
      rules.date_means_end_of_day ? "DATE|RFC3339 (a date: its end)" : "DATE|RFC3339", "time");
}

}  // namespace fabtrack::cli
