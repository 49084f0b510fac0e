// nccl-tests text output: the table parser over cleaned lines.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_tests_text_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<fabtrack::ParseError> errors;
  fabtrack::ParseNcclTestsText(fabtrack::SplitAndClean(text), &errors);
  return 0;
}
