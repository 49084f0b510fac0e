// Analyzer config files: errors must name file:line, never crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "analyzer/config.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  try {
    fabtrack::analyzer::ParseAnalyzerConfig(text, "fuzz.conf");
  } catch (const fabtrack::analyzer::ConfigError& e) {
    if (std::string_view(e.what()).rfind("fuzz.conf:", 0) != 0) __builtin_trap();
  }
  return 0;
}
