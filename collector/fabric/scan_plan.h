// What a fabric scan asks the PMAs, in what order, and how patiently: pure,
// so the plan and the retry policy are tested without a subnet. The edge
// (subnet_scan_ibmad.cc) sends the queries, many in flight at once.
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "collector/fabric/pma_decode.h"
#include "core/fabric_scan.h"

namespace fabtrack::fabric {

struct ScanPolicy {
  int timeout_ms = 300;  // per MAD try
  int retries = 2;       // tries after the first
  int window = 64;       // MADs in flight at once
};

struct PmaQuery {
  std::string guid;  // the node asked
  int port = 0;      // PortSelect (0 for ClassPortInfo)
  int lid = 0;       // where its PMA answers
  uint16_t attribute = 0;

  friend bool operator==(const PmaQuery&, const PmaQuery&) = default;
};

// One ClassPortInfo per node with a LID: its CapabilityMask says whether
// PortCountersExtended and PortXmitWait are there.
std::vector<PmaQuery> PlanCapabilityReads(const FabricScan& discovered);

// One PortCounters with AllPortSelect per switch whose PMA has it and
// would otherwise be asked PortCounters and PortCountersExtended per port:
// where that sum shows no error and no XmitWait, every port's error
// counters are zero (counters never go below zero, and a PMA's sum
// saturates rather than wraps), so PortCountersExtended per port says the
// rest (ErrorsKnownZero). Nothing for a PMA whose PortCountersExtended
// already carries the error counters.
// With `errors_only` (no data counters wanted) every switch with
// AllPortSelect is asked its sum, as ibqueryerrors does.
std::vector<PmaQuery> PlanAggregateReads(const FabricScan& discovered,
                                         const std::map<std::string, PmaCapabilities>& caps,
                                         bool errors_only = false);

// Whether a switch's AllPortSelect PortCounters (decoded) shows every error
// counter, and port_xmit_wait where the PMA has it, at zero. The data and
// packet counters are not looked at: they are read per port anyway.
bool ErrorsKnownZero(const std::map<std::string, uint64_t>& aggregate, bool xmit_wait);

// What each port of every node whose capabilities are known is asked (a
// node whose ClassPortInfo did not answer is asked nothing more: it is
// already a finding): PortCountersExtended alone where the PMA's
// CapabilityMask2 says it carries the error counters too, or where the node
// is in `errors_zero` (its AllPortSelect sum was clean); else PortCounters,
// and PortCountersExtended too where the mask says so. Switch port 0 (the
// management port) is left out; a CA's ports are asked at their own LIDs, a
// switch's at its port 0 LID. With `errors_only`: nothing for a node in
// `errors_zero`, else one MAD per port (PortCountersExtended where it
// carries the error counters, else PortCounters).
std::vector<PmaQuery> PlanCounterReads(const FabricScan& discovered,
                                       const std::map<std::string, PmaCapabilities>& caps,
                                       const std::set<std::string>& errors_zero = {},
                                       bool errors_only = false);

// PortRcvErrorDetails of every port whose counters (as read) hold a
// port_rcv_errors above zero: what those errors were, at no cost on a port
// without any. Switch port 0 left out, LIDs as PlanCounterReads's.
std::vector<PmaQuery> PlanRcvErrorDetailReads(const FabricScan& scanned);

// "no answer after 3 tries (300 ms each)": the finding's words for a query
// that ran out of retries.
std::string NoAnswerText(const ScanPolicy& policy);

}  // namespace fabtrack::fabric
