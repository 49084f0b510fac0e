// Port dumps operators collect (ibstat, ibstatus, perfquery, ibv_devinfo,
// ethtool -S, saved sysfs files) and ibdev2netdev maps: any text gives a
// dump or a reason, and every error names a line of the text.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "collector/parse/port_dump_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const int lines = 1 + static_cast<int>(std::count(text.begin(), text.end(), '\n'));
  std::vector<fabtrack::PortDumpError> errors;
  fabtrack::PortDumpContext context;
  context.netdev = "ens1f0np0";
  context.netdev_map = fabtrack::ParseIbdev2netdev(text, &errors);
  for (const fabtrack::PortDumpError& e : errors) {
    if (e.line < 1 || e.line > lines) __builtin_trap();
  }
  std::string why;
  if (auto dump = fabtrack::ParsePortDump(text, context, &why)) {
    if (dump->ports.empty() && dump->errors.empty()) __builtin_trap();
    for (const fabtrack::PortDumpError& e : dump->errors) {
      if (e.line < 1 || e.line > lines) __builtin_trap();
    }
  } else if (why.empty()) {
    __builtin_trap();
  }
  return 0;
}
