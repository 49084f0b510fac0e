// NCCL RAS status replies (text and JSON, as `fabtrack ras status` receives
// them from a socket), read and judged.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/ras/ras_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fabtrack::ras::Judge(fabtrack::ras::ParseRasText(text));
  fabtrack::ras::Judge(fabtrack::ras::ParseRasJson(text));
  return 0;
}
