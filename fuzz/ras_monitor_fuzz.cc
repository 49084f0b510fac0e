// NCCL RAS's event stream (MONITOR, NCCL >= 2.29) as `ras watch` reads it,
// in both formats, cut where the input's first byte says (a read boundary
// mid-line or mid-object), then fed byte by byte.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/ras/ras_monitor.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t cut = size == 0 ? 0 : data[0] * size / 256;
  for (const char* format : {"text", "json"}) {
    fabtrack::ras::MonitorParser parser(format);
    fabtrack::ras::MonitorBatch batch;
    parser.Feed(text.substr(0, cut), &batch);
    parser.Feed(text.substr(cut), &batch);
    parser.Finish(&batch);
    if (size <= 4096) {
      fabtrack::ras::MonitorParser bytewise(format);
      fabtrack::ras::MonitorBatch again;
      for (char c : text) bytewise.Feed(std::string_view(&c, 1), &again);
      bytewise.Finish(&again);
    }
  }
  return 0;
}
