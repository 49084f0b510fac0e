// Port samples gathered from other nodes (sweep bracketing, spool).
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/json_instances.h"
#include "core/port_sample_json.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  std::string why;
  if (auto host = fabtrack::HostPortsFromJson(doc, &why)) {
    auto back = fabtrack::HostPortsFromJson(fabtrack::HostPortsToJson(*host), &why);
    if (!back || !(*back == *host)) __builtin_trap();
  }
  return 0;
}
