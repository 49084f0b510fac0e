// nccl-tests -J JSON output.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "collector/parse/nccl_tests_json_parser.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  std::vector<fabtrack::ParseError> errors;
  fabtrack::ParseNcclTestsJson(text, &errors);
  return 0;
}
