// NCCL_DEBUG=INFO logs, and the whole-file dispatcher that sniffs formats.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/parse_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<fabtrack::ParseError> errors;
  fabtrack::ParseNcclLog(fabtrack::SplitAndClean(text), &errors);
  fabtrack::ParseText(text, "fuzz-input");
  return 0;
}
