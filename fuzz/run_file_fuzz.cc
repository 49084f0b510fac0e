// The harness result file (also the spool's run payload).
#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "core/run_record_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  std::string error;
  if (auto run = fabtrack::RunRecordFromJson(doc, &error)) {
    // What was read must write back and read again the same way.
    std::string again;
    if (!fabtrack::RunRecordFromJson(fabtrack::RunRecordToJson(*run), &again)) __builtin_trap();
  }
  return 0;
}
