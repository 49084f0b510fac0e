// NCCL Inspector plugin output: JSON lines and Prometheus textfiles, and the
// summary over whatever records come out.
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/parse/inspector_parser.h"

namespace {

// What the parser promises whatever the input: checked so that a broken
// promise is a crash the fuzzer keeps.
void Check(const fabtrack::InspectorParseResult& r) {
  if (r.errors.size() > fabtrack::kInspectorMaxErrors + 1) __builtin_trap();
  for (const fabtrack::InspectorRecord& x : r.records) {
    if (x.line < 1 || x.message_bytes < 0 || !std::isfinite(x.exec_time_us) || x.exec_time_us < 0 ||
        (x.rank && x.nranks && *x.rank >= *x.nranks)) {
      __builtin_trap();
    }
  }
  for (const fabtrack::InspectorGroupSummary& g : fabtrack::SummarizeInspector(r.records)) {
    if (g.count == 0 || g.median_us > g.p90_us || g.p90_us > g.max_us) __builtin_trap();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Check(fabtrack::ParseInspectorJsonLines(text, "fuzz-input.log"));
  Check(fabtrack::ParseInspectorPrometheus(
      text, "nccl_inspector_metrics_00000000-0000-0000-0000-000000000000.prom"));
  return 0;
}
