// PMA replies as they come off the wire (collector/fabric/pma_decode.h).
// The first byte picks the PortSelect asked and whether PortXmitWait is
// read; the rest is the MAD. Each decoder must refuse or decode, never read
// past the buffer.
#include <cstddef>
#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "collector/fabric/pma_decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  int port = data[0] & 0x7f;
  bool xmit_wait = data[0] & 0x80;
  std::span<const uint8_t> mad(data + 1, size - 1);
  std::string why;
  using namespace fabtrack::fabric;
  if (auto caps = DecodeClassPortInfo(mad, &why)) (void)caps->extended_counters();
  if (auto c = DecodePortCounters(mad, port, xmit_wait, &why)) {
    if (c->count("port_xmit_wait") != (xmit_wait ? 1u : 0u)) __builtin_trap();
  }
  (void)DecodePortCountersExtended(mad, port, &why);
  // With the additional error counters (CapabilityMask2): every counter
  // PortCounters has, from the one reply.
  std::map<std::string, uint64_t> all;
  if (DecodePortCountersExtendedInto(mad, port, &all, &why, true, xmit_wait)) {
    for (const std::string& name : ErrorCounterNames(xmit_wait)) {
      if (!all.count(name)) __builtin_trap();
    }
  }
  std::map<std::string, uint64_t> details;
  if (DecodePortRcvErrorDetailsInto(mad, port, &details, &why) && details.size() != 6)
    __builtin_trap();
  return 0;
}
