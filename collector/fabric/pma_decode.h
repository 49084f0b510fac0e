// What a switch's or HCA's Performance Management Agent answered, decoded
// from the 256-byte MAD as it came off the wire (IBA 16.1.3: ClassPortInfo,
// PortCounters, PortCountersExtended). Pure: no libibmad, so it is fuzzed
// and tested on hosts without it; tests cross-check it with libibmad's own
// field tables where that library is installed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <vector>

namespace fabtrack::fabric {

inline constexpr size_t kMadSize = 256;
inline constexpr uint8_t kPerformanceClass = 0x04;
inline constexpr uint16_t kClassPortInfo = 0x0001;
inline constexpr uint16_t kPortCounters = 0x0012;
inline constexpr uint16_t kPortCountersExtended = 0x001D;
inline constexpr uint16_t kPortRcvErrorDetails = 0x0015;

// ClassPortInfo CapabilityMask bits of the PerfMgt class (IBA 16.1.2 and
// annex A13): which counters a PMA has.
inline constexpr uint16_t kCapAllPortSelect = 1 << 8;
inline constexpr uint16_t kCapExtendedWidth = 1 << 9;         // PortCountersExtended, all fields
inline constexpr uint16_t kCapExtendedWidthNoIetf = 1 << 10;  // ... without the IETF ones
inline constexpr uint16_t kCapXmitWait = 1 << 12;             // PortCounters.PortXmitWait
// CapabilityMask2 (the 27 bits above RespTimeValue): PortCountersExtended
// also carries the error counters and PortXmitWait, 64 bits each
// (IsAdditionalPortCountersExtendedSupported; perfquery and ibqueryerrors
// test the same bit).
inline constexpr uint32_t kCap2AdditionalExtended = 1 << 1;

struct PmaCapabilities {
  uint16_t cap_mask = 0;
  uint32_t cap_mask2 = 0;
  bool extended_counters() const {
    return cap_mask & (kCapExtendedWidth | kCapExtendedWidthNoIetf);
  }
  bool xmit_wait() const { return cap_mask & kCapXmitWait; }
  bool all_port_select() const { return cap_mask & kCapAllPortSelect; }
  // One PortCountersExtended per port then says all PortCounters would.
  bool additional_extended() const {
    return extended_counters() && (cap_mask2 & kCap2AdditionalExtended);
  }
};

// PortSelect 0xFF with AllPortSelect: the sum over a switch's ports.
inline constexpr int kAllPorts = 0xFF;

// The fixed header every reply is checked against: a PerfMgt GetResp with
// status 0 for the attribute asked. `why` names what did not fit
// ("status 0x0004 (attribute not supported)").
struct MadHeader {
  uint8_t base_version = 0, mgmt_class = 0, class_version = 0, method = 0;
  uint16_t status = 0;
  uint64_t transaction_id = 0;
  uint16_t attribute_id = 0;
  uint32_t attribute_modifier = 0;
};
std::optional<MadHeader> DecodeMadHeader(std::span<const uint8_t> mad, std::string* why);

std::optional<PmaCapabilities> DecodeClassPortInfo(std::span<const uint8_t> mad, std::string* why);

// Counters under the sysfs counters/ names (core/port_sample.h). PortCounters:
// the twelve error counters, port_xmit_wait (when `xmit_wait`), and the
// legacy 32-bit data/packet counters; PortCountersExtended: the 64-bit
// data/packet counters, which replace the legacy ones. `port`: the
// PortSelect asked; a reply for another port is refused.
std::optional<std::map<std::string, uint64_t>> DecodePortCounters(std::span<const uint8_t> mad,
                                                                  int port, bool xmit_wait,
                                                                  std::string* why);
std::optional<std::map<std::string, uint64_t>> DecodePortCountersExtended(
    std::span<const uint8_t> mad, int port, std::string* why);
// The same written into `counters` (a scan's port), replacing the legacy
// values of the same names: no map of its own per reply. With `additional`
// (the PMA's CapabilityMask2 says so) also the twelve error counters and,
// with `xmit_wait`, port_xmit_wait, from their 64-bit fields: then this one
// reply holds every counter PortCounters would. False, and `counters`
// untouched, when the reply does not fit.
bool DecodePortCountersExtendedInto(std::span<const uint8_t> mad, int port,
                                    std::map<std::string, uint64_t>* counters, std::string* why,
                                    bool additional = false, bool xmit_wait = false);

// PortRcvErrorDetails (IBA 16.1.4.3, 16 bits each): what PortRcvErrors
// counted, by cause: port_local_physical_errors, port_malformed_packet_errors,
// port_buffer_overrun_errors, port_dlid_mapping_errors,
// port_vl_mapping_errors, port_looping_errors, written into `counters`.
// False, and `counters` untouched, when the reply does not fit (a PMA
// without the attribute answers status 0x000c).
bool DecodePortRcvErrorDetailsInto(std::span<const uint8_t> mad, int port,
                                   std::map<std::string, uint64_t>* counters, std::string* why);

// The PortCounters names that are not data or packet counters: the twelve
// error counters, and port_xmit_wait when `xmit_wait`.
const std::vector<std::string>& ErrorCounterNames(bool xmit_wait);

}  // namespace fabtrack::fabric
