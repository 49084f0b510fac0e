// What a fabric scan asks the PMAs, in what order, and how patiently: pure,
// so the plan and the retry policy are tested without a subnet. The edge
// (subnet_scan_ibmad.cc) sends the queries, many in flight at once.
#pragma once

#include <cstdint>
#include <map>
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

// PortCounters of every port of every node whose capabilities are known (a
// node whose ClassPortInfo did not answer is asked nothing more: it is
// already a finding), and PortCountersExtended where the mask says so.
// Switch port 0 (the management port) is left out; a CA's ports are asked at
// their own LIDs, a switch's at its port 0 LID.
std::vector<PmaQuery> PlanCounterReads(const FabricScan& discovered,
                                       const std::map<std::string, PmaCapabilities>& caps);

// "no answer after 3 tries (300 ms each)": the finding's words for a query
// that ran out of retries.
std::string NoAnswerText(const ScanPolicy& policy);

}  // namespace fabtrack::fabric
