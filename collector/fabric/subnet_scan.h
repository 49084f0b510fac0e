// `fabtrack fabric scan`'s reading of the subnet: discovery (libibnetdisc)
// then every PMA's counters (libibumad, a window of MADs in flight). The
// MAD I/O lives in subnet_scan_ibmad.cc; without libibmad the build has
// subnet_scan_unavailable.cc, which says so.
#pragma once

#include <optional>
#include <string>

#include "collector/fabric/scan_plan.h"
#include "core/fabric_scan.h"

namespace fabtrack::fabric {

// Who discovers the subnet: fabtrack's own walk of directed-route SMPs
// (smp_walk.h: fewer SMPs, its own timeouts) or libibnetdisc's.
enum class DiscoveryEngine { kSmpWalk, kLibibnetdisc };

struct ScanSettings {
  std::string ca;  // local CA ("mlx5_0"); empty: the first one with an active port
  int port = 0;    // its port; 0: the first active
  ScanPolicy policy;
  int discovery_smps = 16;  // discovery's SMPs in flight
  DiscoveryEngine discovery = DiscoveryEngine::kSmpWalk;
  // ibqueryerrors' reading (`--errors-only`): a switch whose AllPortSelect
  // sum shows no error is asked nothing per port (its ports' error counters
  // are zero, their data counters absent); elsewhere PortCounters per port,
  // PortCountersExtended only where it carries the error counters too.
  bool errors_only = false;
};

struct ScanOutcome {
  std::optional<FabricScan> scan;
  std::string error;  // why there is no scan ("no InfiniBand CA here", ...)
};

// False when fabtrack was built without libibmad/libibnetdisc.
bool SubnetScanBuilt();

ScanOutcome ScanSubnet(const ScanSettings& settings);

}  // namespace fabtrack::fabric
