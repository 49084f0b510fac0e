// PMA replies decoded from raw MADs: each field at its IBA offset
// (cross-checked against libibmad's own field table where it is installed),
// replies that do not fit refused with why.
#include "collector/fabric/pma_decode.h"

#include <gtest/gtest.h>

#include <array>
#include <map>
#include <string>
#include <vector>

#ifdef FABTRACK_HAVE_IBMAD
#include <infiniband/mad.h>
#endif

namespace fabtrack::fabric {
namespace {

std::array<uint8_t, kMadSize> Reply(uint16_t attribute, int port) {
  std::array<uint8_t, kMadSize> m{};
  m[0] = 1;
  m[1] = kPerformanceClass;
  m[2] = 1;
  m[3] = 0x81;
  m[16] = static_cast<uint8_t>(attribute >> 8);
  m[17] = static_cast<uint8_t>(attribute);
  m[64 + 1] = static_cast<uint8_t>(port);
  return m;
}

void Put(std::array<uint8_t, kMadSize>& m, size_t offset, uint64_t v, size_t width) {
  for (size_t i = 0; i < width; ++i)
    m[64 + offset + width - 1 - i] = static_cast<uint8_t>(v >> (8 * i));
}

TEST(PmaDecode, PortCountersFieldsAtTheirOffsets) {
  auto m = Reply(kPortCounters, 9);
  Put(m, 4, 17, 2);       // SymbolErrorCounter
  Put(m, 6, 3, 1);        // LinkErrorRecoveryCounter
  Put(m, 7, 2, 1);        // LinkDownedCounter
  Put(m, 8, 5, 2);        // PortRcvErrors
  Put(m, 14, 7, 2);       // PortXmitDiscards
  m[64 + 19] = 0x4b;      // LocalLinkIntegrity 4, ExcessiveBufferOverrun 11
  Put(m, 22, 6, 2);       // VL15Dropped
  Put(m, 24, 1000, 4);    // PortXmitData
  Put(m, 40, 123456, 4);  // PortXmitWait
  std::string why;
  auto c = DecodePortCounters(m, 9, true, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->at("symbol_error"), 17u);
  EXPECT_EQ(c->at("link_error_recovery"), 3u);
  EXPECT_EQ(c->at("link_downed"), 2u);
  EXPECT_EQ(c->at("port_rcv_errors"), 5u);
  EXPECT_EQ(c->at("port_xmit_discards"), 7u);
  EXPECT_EQ(c->at("local_link_integrity_errors"), 4u);
  EXPECT_EQ(c->at("excessive_buffer_overrun_errors"), 11u);
  EXPECT_EQ(c->at("VL15_dropped"), 6u);
  EXPECT_EQ(c->at("port_xmit_data"), 1000u);
  EXPECT_EQ(c->at("port_xmit_wait"), 123456u);
  auto without_wait = DecodePortCounters(m, 9, false, &why);
  ASSERT_TRUE(without_wait);
  EXPECT_FALSE(without_wait->count("port_xmit_wait")) << "absent where CapMask has no XmitWait";
}

TEST(PmaDecode, ExtendedCountersAre64Bit) {
  auto m = Reply(kPortCountersExtended, 3);
  Put(m, 8, 0x123456789abcULL, 8);
  Put(m, 64, 42, 8);
  std::string why;
  auto c = DecodePortCountersExtended(m, 3, &why);
  ASSERT_TRUE(c) << why;
  EXPECT_EQ(c->at("port_xmit_data"), 0x123456789abcULL);
  EXPECT_EQ(c->at("multicast_rcv_packets"), 42u);
}

TEST(PmaDecode, ClassPortInfoCapabilityMask) {
  auto m = Reply(kClassPortInfo, 0);
  Put(m, 2, 0x1300, 2);
  std::string why;
  auto caps = DecodeClassPortInfo(m, &why);
  ASSERT_TRUE(caps) << why;
  EXPECT_TRUE(caps->extended_counters());
  EXPECT_TRUE(caps->xmit_wait());
  Put(m, 2, 0x0100, 2);
  EXPECT_FALSE(DecodeClassPortInfo(m, &why)->extended_counters());
}

TEST(PmaDecode, ClassPortInfoCapabilityMask2AboveRespTimeValue) {
  auto m = Reply(kClassPortInfo, 0);
  Put(m, 2, kCapExtendedWidth | kCapXmitWait, 2);
  // CapabilityMask2 bit 1 (IsAdditionalPortCountersExtendedSupported), then
  // RespTimeValue 0x12 in the word's low 5 bits.
  Put(m, 4, (uint32_t{kCap2AdditionalExtended} << 5) | 0x12, 4);
  std::string why;
  auto caps = DecodeClassPortInfo(m, &why);
  ASSERT_TRUE(caps) << why;
  EXPECT_EQ(caps->cap_mask2, kCap2AdditionalExtended);
  EXPECT_TRUE(caps->additional_extended());
  Put(m, 4, 0x12 | (1 << 5), 4);  // bit 0 (PM_Key) only
  EXPECT_FALSE(DecodeClassPortInfo(m, &why)->additional_extended());
  Put(m, 4, (uint32_t{kCap2AdditionalExtended} << 5), 4);
  Put(m, 2, kCapXmitWait, 2);  // no PortCountersExtended at all
  EXPECT_FALSE(DecodeClassPortInfo(m, &why)->additional_extended());
}

TEST(PmaDecode, ExtendedCarriesTheErrorCountersWhereCapabilityMask2Says) {
  auto m = Reply(kPortCountersExtended, 7);
  Put(m, 8, 1000, 8);          // PortXmitData
  Put(m, 72, 70000, 8);        // SymbolErrorCounter: past PortCounters' 16 bits
  Put(m, 88, 3, 8);            // LinkDownedCounter
  Put(m, 160, 6, 8);           // VL15Dropped
  Put(m, 168, 1ULL << 40, 8);  // PortXmitWait
  std::string why;
  std::map<std::string, uint64_t> plain, all, no_wait;
  ASSERT_TRUE(DecodePortCountersExtendedInto(m, 7, &plain, &why)) << why;
  EXPECT_FALSE(plain.count("symbol_error")) << "the error fields are reserved without the bit";
  ASSERT_TRUE(DecodePortCountersExtendedInto(m, 7, &all, &why, true, true)) << why;
  EXPECT_EQ(all.at("port_xmit_data"), 1000u);
  EXPECT_EQ(all.at("symbol_error"), 70000u);
  EXPECT_EQ(all.at("link_downed"), 3u);
  EXPECT_EQ(all.at("VL15_dropped"), 6u);
  EXPECT_EQ(all.at("port_xmit_wait"), 1ULL << 40);
  for (const std::string& name : ErrorCounterNames(true))
    EXPECT_TRUE(all.count(name)) << name << ": every counter PortCounters has";
  ASSERT_TRUE(DecodePortCountersExtendedInto(m, 7, &no_wait, &why, true, false)) << why;
  EXPECT_FALSE(no_wait.count("port_xmit_wait")) << "absent where CapMask has no XmitWait";
}

TEST(PmaDecode, ReceiveErrorDetails) {
  auto m = Reply(kPortRcvErrorDetails, 4);
  Put(m, 4, 9, 2);   // PortLocalPhysicalErrors
  Put(m, 6, 2, 2);   // PortMalformedPacketErrors
  Put(m, 14, 1, 2);  // PortLoopingErrors
  std::string why;
  std::map<std::string, uint64_t> c = {{"port_rcv_errors", 12}};
  ASSERT_TRUE(DecodePortRcvErrorDetailsInto(m, 4, &c, &why)) << why;
  EXPECT_EQ(c.at("port_rcv_errors"), 12u) << "left as it was";
  EXPECT_EQ(c.at("port_local_physical_errors"), 9u);
  EXPECT_EQ(c.at("port_malformed_packet_errors"), 2u);
  EXPECT_EQ(c.at("port_buffer_overrun_errors"), 0u);
  EXPECT_EQ(c.at("port_looping_errors"), 1u);
  std::map<std::string, uint64_t> untouched;
  EXPECT_FALSE(DecodePortRcvErrorDetailsInto(m, 5, &untouched, &why));
  EXPECT_EQ(why, "reply for port 4, asked 5");
  m[5] = 0x0c;  // a PMA without the attribute
  EXPECT_FALSE(DecodePortRcvErrorDetailsInto(m, 4, &untouched, &why));
  EXPECT_TRUE(untouched.empty());
}

TEST(PmaDecode, RepliesThatDoNotFitAreRefusedWithWhy) {
  std::string why;
  auto m = Reply(kPortCounters, 9);
  EXPECT_FALSE(DecodePortCounters(m, 8, true, &why));
  EXPECT_EQ(why, "reply for port 9, asked 8");
  EXPECT_FALSE(DecodePortCountersExtended(m, 9, &why));
  EXPECT_EQ(why, "reply for attribute 0x0012, asked 0x001d");
  m[4] = 0x00;
  m[5] = 0x0c;  // attribute not supported
  EXPECT_FALSE(DecodePortCounters(m, 9, true, &why));
  EXPECT_EQ(why, "status 0x000c (attribute not supported)");
  std::vector<uint8_t> short_mad(100);
  EXPECT_FALSE(DecodePortCounters(short_mad, 9, true, &why));
  EXPECT_EQ(why, "short MAD: 100 bytes");
  m = Reply(kPortCounters, 9);
  m[1] = 0x81;  // SMP class
  EXPECT_FALSE(DecodePortCounters(m, 9, true, &why));
  EXPECT_EQ(why, "not a PerfMgt MAD (base version 1, class 0x81)");
}

#ifdef FABTRACK_HAVE_IBMAD
// libibmad's field table (what perfquery prints from) and this decoder
// agree on every PortCounters and PortCountersExtended field.
TEST(PmaDecode, AgreesWithLibibmad) {
  auto m = Reply(kPortCounters, 5);
  uint8_t* data = m.data() + IB_PC_DATA_OFFS;
  const std::pair<MAD_FIELDS, const char*> fields[] = {
      {IB_PC_ERR_SYM_F, "symbol_error"},
      {IB_PC_LINK_RECOVERS_F, "link_error_recovery"},
      {IB_PC_LINK_DOWNED_F, "link_downed"},
      {IB_PC_ERR_RCV_F, "port_rcv_errors"},
      {IB_PC_ERR_PHYSRCV_F, "port_rcv_remote_physical_errors"},
      {IB_PC_ERR_SWITCH_REL_F, "port_rcv_switch_relay_errors"},
      {IB_PC_XMT_DISCARDS_F, "port_xmit_discards"},
      {IB_PC_ERR_XMTCONSTR_F, "port_xmit_constraint_errors"},
      {IB_PC_ERR_RCVCONSTR_F, "port_rcv_constraint_errors"},
      {IB_PC_ERR_LOCALINTEG_F, "local_link_integrity_errors"},
      {IB_PC_ERR_EXCESS_OVR_F, "excessive_buffer_overrun_errors"},
      {IB_PC_VL15_DROPPED_F, "VL15_dropped"},
      {IB_PC_XMT_BYTES_F, "port_xmit_data"},
      {IB_PC_RCV_BYTES_F, "port_rcv_data"},
      {IB_PC_XMT_PKTS_F, "port_xmit_packets"},
      {IB_PC_RCV_PKTS_F, "port_rcv_packets"},
      {IB_PC_XMT_WAIT_F, "port_xmit_wait"},
  };
  uint32_t value = 1;
  for (const auto& [field, name] : fields) mad_set_field(data, 0, field, value++);
  std::string why;
  auto c = DecodePortCounters(m, 5, true, &why);
  ASSERT_TRUE(c) << why;
  value = 1;
  for (const auto& [field, name] : fields) EXPECT_EQ(c->at(name), value++) << name;

  auto e = Reply(kPortCountersExtended, 5);
  data = e.data() + IB_PC_DATA_OFFS;
  const std::pair<MAD_FIELDS, const char*> ext[] = {
      {IB_PC_EXT_XMT_BYTES_F, "port_xmit_data"},
      {IB_PC_EXT_RCV_BYTES_F, "port_rcv_data"},
      {IB_PC_EXT_XMT_PKTS_F, "port_xmit_packets"},
      {IB_PC_EXT_RCV_PKTS_F, "port_rcv_packets"},
      {IB_PC_EXT_XMT_UPKTS_F, "unicast_xmit_packets"},
      {IB_PC_EXT_RCV_UPKTS_F, "unicast_rcv_packets"},
      {IB_PC_EXT_XMT_MPKTS_F, "multicast_xmit_packets"},
      {IB_PC_EXT_RCV_MPKTS_F, "multicast_rcv_packets"},
  };
  uint64_t big = 0x100000000ULL;
  for (const auto& [field, name] : ext) mad_set_field64(data, 0, field, big++);
  auto d = DecodePortCountersExtended(e, 5, &why);
  ASSERT_TRUE(d) << why;
  big = 0x100000000ULL;
  for (const auto& [field, name] : ext) EXPECT_EQ(d->at(name), big++) << name;

  const std::pair<MAD_FIELDS, const char*> additional[] = {
      {IB_PC_EXT_ERR_SYM_F, "symbol_error"},
      {IB_PC_EXT_LINK_RECOVERS_F, "link_error_recovery"},
      {IB_PC_EXT_LINK_DOWNED_F, "link_downed"},
      {IB_PC_EXT_ERR_RCV_F, "port_rcv_errors"},
      {IB_PC_EXT_ERR_PHYSRCV_F, "port_rcv_remote_physical_errors"},
      {IB_PC_EXT_ERR_SWITCH_REL_F, "port_rcv_switch_relay_errors"},
      {IB_PC_EXT_XMT_DISCARDS_F, "port_xmit_discards"},
      {IB_PC_EXT_ERR_XMTCONSTR_F, "port_xmit_constraint_errors"},
      {IB_PC_EXT_ERR_RCVCONSTR_F, "port_rcv_constraint_errors"},
      {IB_PC_EXT_ERR_LOCALINTEG_F, "local_link_integrity_errors"},
      {IB_PC_EXT_ERR_EXCESS_OVR_F, "excessive_buffer_overrun_errors"},
      {IB_PC_EXT_VL15_DROPPED_F, "VL15_dropped"},
      {IB_PC_EXT_XMT_WAIT_F, "port_xmit_wait"},
  };
  big = 0x200000000ULL;
  for (const auto& [field, name] : additional) mad_set_field64(data, 0, field, big++);
  std::map<std::string, uint64_t> all;
  ASSERT_TRUE(DecodePortCountersExtendedInto(e, 5, &all, &why, true, true)) << why;
  big = 0x200000000ULL;
  for (const auto& [field, name] : additional) EXPECT_EQ(all.at(name), big++) << name;

  auto details = Reply(kPortRcvErrorDetails, 5);
  data = details.data() + IB_PC_DATA_OFFS;
  const std::pair<MAD_FIELDS, const char*> causes[] = {
      {IB_PC_RCV_LOCAL_PHY_ERR_F, "port_local_physical_errors"},
      {IB_PC_RCV_MALFORMED_PKT_ERR_F, "port_malformed_packet_errors"},
      {IB_PC_RCV_BUF_OVR_ERR_F, "port_buffer_overrun_errors"},
      {IB_PC_RCV_DLID_MAP_ERR_F, "port_dlid_mapping_errors"},
      {IB_PC_RCV_VL_MAP_ERR_F, "port_vl_mapping_errors"},
      {IB_PC_RCV_LOOPING_ERR_F, "port_looping_errors"},
  };
  value = 101;
  for (const auto& [field, name] : causes) mad_set_field(data, 0, field, value++);
  std::map<std::string, uint64_t> by_cause;
  ASSERT_TRUE(DecodePortRcvErrorDetailsInto(details, 5, &by_cause, &why)) << why;
  value = 101;
  for (const auto& [field, name] : causes) EXPECT_EQ(by_cause.at(name), value++) << name;

  auto cpi = Reply(kClassPortInfo, 0);
  mad_set_field(cpi.data() + IB_PC_DATA_OFFS, 0, IB_CPI_CAPMASK_F, kCapExtendedWidth);
  mad_set_field(cpi.data() + IB_PC_DATA_OFFS, 0, IB_CPI_CAPMASK2_F, 0x5432102);
  mad_set_field(cpi.data() + IB_PC_DATA_OFFS, 0, IB_CPI_RESP_TIME_VALUE_F, 0x12);
  auto caps = DecodeClassPortInfo(cpi, &why);
  ASSERT_TRUE(caps) << why;
  EXPECT_EQ(caps->cap_mask2, 0x5432102u);
  EXPECT_TRUE(caps->additional_extended());
}
#endif

}  // namespace
}  // namespace fabtrack::fabric
