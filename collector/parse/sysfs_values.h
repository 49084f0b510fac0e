// What the files of /sys/class/infiniband/<dev>/ports/<n>/ say, read the one
// way for the live reader (collector/counters/sysfs_ports) and for saved
// dumps of them (`grep -H . .../counters/*`, collector/parse/port_dump_parser):
// "4: ACTIVE" -> ACTIVE/4, "400 Gb/sec (4X NDR)" -> 400, counters as
// decimal numbers ("N/A (no PMA)" is absent), counters_ext/ names under
// their counters/ names, legacy counters stuck at their maximum flagged,
// port_{xmit,rcv}_data (4-octet words) as bytes. Pure.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

// Legacy PortCounters (IBA 1.3 vol. 1, 16.1.3.5, attribute 0x0012) fields and
// their widths, as the kernel reads them in drivers/infiniband/core/sysfs.c
// (PORT_PMA_ATTR(name, counter, width, offset)). These counters do not wrap:
// at their maximum they stop, so a value at the maximum is "stuck", not a
// rate of zero. The four data/packet counters are 32-bit only where no
// 64-bit PortCountersExtended value replaces them: on kernels before 4.5 the
// 64-bit ones live in counters_ext/; since 4.5 (commit 145d9c541032,
// "Display extended counter set if available") counters/ holds the 64-bit
// values itself and then also has unicast_*/multicast_* packets, which only
// the extended set carries. port_xmit_wait is always 32-bit.
struct SysfsLegacyCounter {
  const char* name;
  uint64_t max;
  bool data;  // a data/packet counter that PortCountersExtended widens to 64 bits
};
inline constexpr uint64_t kSysfsMax4 = 15, kSysfsMax8 = 255, kSysfsMax16 = 65535,
                          kSysfsMax32 = 4294967295u;
// A 64-bit counter at its maximum (2^64-1) is no count either: the
// PortCountersExtended counters stop there too, and a driver that fails a
// read may print it. Saturated whatever the counter.
inline constexpr uint64_t kSysfsMax64 = 18446744073709551615u;
inline constexpr SysfsLegacyCounter kSysfsLegacyCounters[] = {
    {"symbol_error", kSysfsMax16, false},
    {"link_error_recovery", kSysfsMax8, false},
    {"link_downed", kSysfsMax8, false},
    {"port_rcv_errors", kSysfsMax16, false},
    {"port_rcv_remote_physical_errors", kSysfsMax16, false},
    {"port_rcv_switch_relay_errors", kSysfsMax16, false},
    {"port_xmit_discards", kSysfsMax16, false},
    {"port_xmit_constraint_errors", kSysfsMax8, false},
    {"port_rcv_constraint_errors", kSysfsMax8, false},
    {"local_link_integrity_errors", kSysfsMax4, false},
    {"excessive_buffer_overrun_errors", kSysfsMax4, false},
    {"VL15_dropped", kSysfsMax16, false},
    {"port_xmit_data", kSysfsMax32, true},
    {"port_rcv_data", kSysfsMax32, true},
    {"port_xmit_packets", kSysfsMax32, true},
    {"port_rcv_packets", kSysfsMax32, true},
    {"port_xmit_wait", kSysfsMax32, false},
};

// counters_ext/ (kernels before 4.5, and MLNX_OFED) file names and the
// counters/ names their values are stored under, so that consumers see one
// name whatever the kernel.
struct SysfsExtName {
  std::string_view file;
  const char* key;
};
inline constexpr SysfsExtName kSysfsExtNames[] = {
    {"port_xmit_data_64", "port_xmit_data"},
    {"port_rcv_data_64", "port_rcv_data"},
    {"port_xmit_packets_64", "port_xmit_packets"},
    {"port_rcv_packets_64", "port_rcv_packets"},
    {"port_unicast_xmit_packets", "unicast_xmit_packets"},
    {"port_unicast_rcv_packets", "unicast_rcv_packets"},
    {"port_multicast_xmit_packets", "multicast_xmit_packets"},
    {"port_multicast_rcv_packets", "multicast_rcv_packets"},
};

// A counter file's text, trailing whitespace already gone: a decimal number,
// else nullopt ("N/A (no PMA)", empty, garbled: absent, not zero).
std::optional<uint64_t> ParseSysfsCounter(std::string_view s);

// "4: ACTIVE" -> {4, "ACTIVE"}; text without a numeric prefix keeps no code.
void ParseSysfsCoded(std::string_view s, std::optional<std::string>* text,
                     std::optional<int>* code);

// "100 Gb/sec (4X EDR)", "2.5 Gb/sec (1X SDR)", "10 Gb/sec (4X)" -> Gb/s.
std::optional<double> ParseSysfsRateGbps(std::string_view s);

// Once a port's counters are all read: `saturated` (legacy counters at their
// maximum with no 64-bit source: the extended set present, or the counter in
// `widened`, the counters/ names a counters_ext/ file gave; any counter at
// 2^64-1), and xmit/rcv
// bytes from the 4-octet data words.
void FinishSysfsPort(const std::vector<std::string>& widened, PortSample* s);

}  // namespace fabtrack
