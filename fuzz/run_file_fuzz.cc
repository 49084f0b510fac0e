// The harness result file (also the spool's run payload).
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/json_instances.h"
#include "core/run_record_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  std::string error;
  const auto run = fabtrack::RunRecordFromJson(doc, &error);
  if (run) {
    // What was read writes back and reads again as the same record (every
    // field, compared as a struct), and writing that gives the same bytes:
    // write -> read -> write is stable.
    const std::string text = fabtrack::RunRecordToJson(*run).dump();
    std::string again;
    const auto back = fabtrack::RunRecordFromJson(nlohmann::json::parse(text), &again);
    if (!back || !(*back == *run)) __builtin_trap();
    if (fabtrack::RunRecordToJson(*back).dump() != text) __builtin_trap();
    // The streamed writer is the document's text.
    std::string streamed;
    fabtrack::AppendRunRecordJson(*run, &streamed);
    if (streamed != text) __builtin_trap();
  }
  // The element-by-element reader agrees with the document reader whenever
  // both read the input (their errors may differ: it meets a bad element
  // before the document reader checks the version).
  nlohmann::json rest;
  std::string streamed_error;
  auto streamed_run = fabtrack::ParseRunRecordText(
      std::string_view(reinterpret_cast<const char*>(data), size), "", &rest, &streamed_error);
  if (streamed_run && run && !(*streamed_run == *run)) __builtin_trap();
  return 0;
}
