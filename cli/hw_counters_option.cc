#include <iostream>

#include "cli/commands.h"
#include "collector/counters/hw_counter_selection.h"
#include "collector/counters/sysfs_ports.h"
#include "core/text.h"

namespace fabtrack::cli {

CLI::Option* AddHwCountersOption(CLI::App* app, HwCounterSelection* selection) {
  *selection = {};
  auto check = [](std::string& text) {
    std::string why;
    return ParseHwCounterSelection(text, &why) ? std::string() : why;
  };
  return app
      ->add_option_function<std::string>(
          "--hw-counters",
          [selection](const std::string& text) {
            std::string why;
            *selection = ParseHwCounterSelection(text, &why).value();  // checked below
          },
          "driver hw_counters/ files to read: all (default), none (what node_exporter reads: "
          "counters/ and port attributes only), or NAME[,NAME...] such as "
          "out_of_buffer,out_of_sequence")
      ->type_name("all|none|NAME[,NAME...]")
      ->check(CLI::Validator(check, ""));
}

void WarnMissingHwCounters(std::string_view command, const std::string& sysfs,
                           const HwCounterSelection& selection) {
  if (selection.mode != HwCounterSelection::Mode::kListed) return;
  const std::vector<std::string> present = HwCounterNames(sysfs);
  const std::vector<std::string> missing = MissingHwCounters(selection, present);
  if (missing.empty()) return;
  // mlx5 in InfiniBand and in RoCE mode have different sets: a name this
  // host lacks is read where it exists, not refused.
  std::cerr << "fabtrack " << command << ": --hw-counters: no port under " << sysfs
            << "/class/infiniband has hw_counters/" << Join(missing, ", hw_counters/") << "; "
            << (present.empty() ? "the ports have no hw_counters/ at all"
                                : "the ports have: " + Join(present, ","))
            << "\n";
}

}  // namespace fabtrack::cli
