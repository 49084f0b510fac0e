// NCCL RAS status replies (text and JSON, as `fabtrack ras status` receives
// them from a socket), read and judged; and RAS's event stream (MONITOR,
// NCCL >= 2.29) in both formats, cut where the input's first byte says (a
// read boundary mid-line or mid-object).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/ras/ras_monitor.h"
#include "collector/ras/ras_report.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  fabtrack::ras::Judge(fabtrack::ras::ParseRasText(text));
  fabtrack::ras::Judge(fabtrack::ras::ParseRasJson(text));
  size_t cut = size == 0 ? 0 : data[0] * size / 256;
  for (const char* format : {"text", "json"}) {
    fabtrack::ras::MonitorParser parser(format);
    fabtrack::ras::MonitorBatch batch;
    parser.Feed(text.substr(0, cut), &batch);
    parser.Feed(text.substr(cut), &batch);
    parser.Finish(&batch);
  }
  return 0;
}
