#include "collector/fabric/pma_decode.h"

#include <cstdio>
#include <iterator>
#include <string>
#include <vector>

namespace fabtrack::fabric {
namespace {

constexpr size_t kDataOffset = 64;  // PerfMgt: 24-byte common header, 40 reserved
constexpr uint8_t kMethodGetResp = 0x81;

uint64_t BigEndian(std::span<const uint8_t> bytes, size_t offset, size_t width) {
  uint64_t v = 0;
  for (size_t i = 0; i < width; ++i) v = (v << 8) | bytes[offset + i];
  return v;
}

std::string Hex(uint64_t v, int digits) {
  char buf[24];
  std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(v));
  return buf;
}

// The MAD status's code field (bits 4..2): IBA 13.4.7.
const char* StatusMeaning(uint16_t status) {
  if (status & 0x0001) return "busy";
  if (status & 0x0002) return "redirect required";
  switch ((status >> 2) & 0x7) {
    case 1:
      return "bad version";
    case 2:
      return "method not supported";
    case 3:
      return "attribute not supported";
    case 7:
      return "invalid attribute or modifier value";
    default:
      return "error";
  }
}

// A reply to `attribute`, checked; the data part, or nullopt with why.
std::optional<std::span<const uint8_t>> ReplyData(std::span<const uint8_t> mad, uint16_t attribute,
                                                  std::string* why) {
  std::optional<MadHeader> h = DecodeMadHeader(mad, why);
  if (!h) return std::nullopt;
  if (h->attribute_id != attribute) {
    if (why)
      *why = "reply for attribute " + Hex(h->attribute_id, 4) + ", asked " + Hex(attribute, 4);
    return std::nullopt;
  }
  return mad.subspan(kDataOffset);
}

bool PortSelectMatches(std::span<const uint8_t> data, int port, std::string* why) {
  if (data[1] == port) return true;
  if (why) *why = "reply for port " + std::to_string(data[1]) + ", asked " + std::to_string(port);
  return false;
}

}  // namespace

std::optional<MadHeader> DecodeMadHeader(std::span<const uint8_t> mad, std::string* why) {
  if (mad.size() < kMadSize) {
    if (why) *why = "short MAD: " + std::to_string(mad.size()) + " bytes";
    return std::nullopt;
  }
  MadHeader h;
  h.base_version = mad[0];
  h.mgmt_class = mad[1];
  h.class_version = mad[2];
  h.method = mad[3];
  h.status = static_cast<uint16_t>(BigEndian(mad, 4, 2));
  h.transaction_id = BigEndian(mad, 8, 8);
  h.attribute_id = static_cast<uint16_t>(BigEndian(mad, 16, 2));
  h.attribute_modifier = static_cast<uint32_t>(BigEndian(mad, 20, 4));
  if (h.base_version != 1 || h.mgmt_class != kPerformanceClass) {
    if (why) {
      *why = "not a PerfMgt MAD (base version " + std::to_string(h.base_version) + ", class " +
             Hex(h.mgmt_class, 2) + ")";
    }
    return std::nullopt;
  }
  if (h.method != kMethodGetResp) {
    if (why) *why = "method " + Hex(h.method, 2) + " is not GetResp";
    return std::nullopt;
  }
  if (h.status != 0) {
    if (why) *why = "status " + Hex(h.status, 4) + " (" + StatusMeaning(h.status) + ")";
    return std::nullopt;
  }
  return h;
}

std::optional<PmaCapabilities> DecodeClassPortInfo(std::span<const uint8_t> mad, std::string* why) {
  std::optional<std::span<const uint8_t>> data = ReplyData(mad, kClassPortInfo, why);
  if (!data) return std::nullopt;
  PmaCapabilities caps;
  caps.cap_mask = static_cast<uint16_t>(BigEndian(*data, 2, 2));
  caps.cap_mask2 = static_cast<uint32_t>(BigEndian(*data, 4, 4) >> 5);
  return caps;
}

std::optional<std::map<std::string, uint64_t>> DecodePortCounters(std::span<const uint8_t> mad,
                                                                  int port, bool xmit_wait,
                                                                  std::string* why) {
  std::optional<std::span<const uint8_t>> reply = ReplyData(mad, kPortCounters, why);
  if (!reply || !PortSelectMatches(*reply, port, why)) return std::nullopt;
  std::span<const uint8_t> d = *reply;
  // In key order, each placed at the end: a scan decodes two of these per
  // port, and a search per key was most of the decoding.
  std::map<std::string, uint64_t> c;
  auto put = [&c](const char* name, uint64_t value) { c.emplace_hint(c.end(), name, value); };
  put("VL15_dropped", BigEndian(d, 22, 2));
  put("excessive_buffer_overrun_errors", d[19] & 0x0f);
  put("link_downed", d[7]);
  put("link_error_recovery", d[6]);
  put("local_link_integrity_errors", d[19] >> 4);
  put("port_rcv_constraint_errors", d[17]);
  put("port_rcv_data", BigEndian(d, 28, 4));
  put("port_rcv_errors", BigEndian(d, 8, 2));
  put("port_rcv_packets", BigEndian(d, 36, 4));
  put("port_rcv_remote_physical_errors", BigEndian(d, 10, 2));
  put("port_rcv_switch_relay_errors", BigEndian(d, 12, 2));
  put("port_xmit_constraint_errors", d[16]);
  put("port_xmit_data", BigEndian(d, 24, 4));
  put("port_xmit_discards", BigEndian(d, 14, 2));
  put("port_xmit_packets", BigEndian(d, 32, 4));
  if (xmit_wait) put("port_xmit_wait", BigEndian(d, 40, 4));
  put("symbol_error", BigEndian(d, 4, 2));
  return c;
}

std::optional<std::map<std::string, uint64_t>> DecodePortCountersExtended(
    std::span<const uint8_t> mad, int port, std::string* why) {
  std::map<std::string, uint64_t> c;
  if (!DecodePortCountersExtendedInto(mad, port, &c, why)) return std::nullopt;
  return c;
}

bool DecodePortCountersExtendedInto(std::span<const uint8_t> mad, int port,
                                    std::map<std::string, uint64_t>* counters, std::string* why,
                                    bool additional, bool xmit_wait) {
  std::optional<std::span<const uint8_t>> reply = ReplyData(mad, kPortCountersExtended, why);
  if (!reply || !PortSelectMatches(*reply, port, why)) return false;
  std::span<const uint8_t> d = *reply;
  // Names made once (most are longer than a short string holds) and put in
  // key order after a hint: into an empty map (most ports) each insert lands
  // at the hint. 64 bits each.
  struct Field {
    std::string name;
    size_t offset;
  };
  static const std::vector<Field> kData = {
      {"multicast_rcv_packets", 64}, {"multicast_xmit_packets", 56}, {"port_rcv_data", 16},
      {"port_rcv_packets", 32},      {"port_xmit_data", 8},          {"port_xmit_packets", 24},
      {"unicast_rcv_packets", 48},   {"unicast_xmit_packets", 40}};
  // IBA 16.1.4.11, after PortMulticastRcvPkts (offset 72 on).
  static const std::vector<Field> kAdditional = {{"VL15_dropped", 160},
                                                 {"excessive_buffer_overrun_errors", 152},
                                                 {"link_downed", 88},
                                                 {"link_error_recovery", 80},
                                                 {"local_link_integrity_errors", 144},
                                                 {"port_rcv_constraint_errors", 136},
                                                 {"port_rcv_errors", 96},
                                                 {"port_rcv_remote_physical_errors", 104},
                                                 {"port_rcv_switch_relay_errors", 112},
                                                 {"port_xmit_constraint_errors", 128},
                                                 {"port_xmit_discards", 120},
                                                 {"symbol_error", 72}};
  static const Field kXmitWait{"port_xmit_wait", 168};
  auto put = [&](const std::vector<Field>& fields) {
    auto hint = counters->end();
    for (const Field& f : fields)
      hint = std::next(counters->insert_or_assign(hint, f.name, BigEndian(d, f.offset, 8)));
  };
  put(kData);
  if (additional) {
    put(kAdditional);
    if (xmit_wait) counters->insert_or_assign(kXmitWait.name, BigEndian(d, kXmitWait.offset, 8));
  }
  return true;
}

bool DecodePortRcvErrorDetailsInto(std::span<const uint8_t> mad, int port,
                                   std::map<std::string, uint64_t>* counters, std::string* why) {
  std::optional<std::span<const uint8_t>> reply = ReplyData(mad, kPortRcvErrorDetails, why);
  if (!reply || !PortSelectMatches(*reply, port, why)) return false;
  std::span<const uint8_t> d = *reply;
  auto put = [counters](const char* name, uint64_t value) {
    counters->insert_or_assign(name, value);
  };
  put("port_local_physical_errors", BigEndian(d, 4, 2));
  put("port_malformed_packet_errors", BigEndian(d, 6, 2));
  put("port_buffer_overrun_errors", BigEndian(d, 8, 2));
  put("port_dlid_mapping_errors", BigEndian(d, 10, 2));
  put("port_vl_mapping_errors", BigEndian(d, 12, 2));
  put("port_looping_errors", BigEndian(d, 14, 2));
  return true;
}

const std::vector<std::string>& ErrorCounterNames(bool xmit_wait) {
  static const std::vector<std::string> kErrors = {
      "VL15_dropped",
      "excessive_buffer_overrun_errors",
      "link_downed",
      "link_error_recovery",
      "local_link_integrity_errors",
      "port_rcv_constraint_errors",
      "port_rcv_errors",
      "port_rcv_remote_physical_errors",
      "port_rcv_switch_relay_errors",
      "port_xmit_constraint_errors",
      "port_xmit_discards",
      "symbol_error",
  };
  static const std::vector<std::string> kWithWait = [] {
    std::vector<std::string> v = kErrors;
    v.push_back("port_xmit_wait");
    return v;
  }();
  return xmit_wait ? kWithWait : kErrors;
}

}  // namespace fabtrack::fabric
