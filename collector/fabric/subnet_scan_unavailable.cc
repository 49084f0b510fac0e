// Built when libibmad/libibnetdisc were not found (FABTRACK_WITH_IBMAD).
#include "collector/fabric/subnet_scan.h"

namespace fabtrack::fabric {

bool SubnetScanBuilt() { return false; }

ScanOutcome ScanSubnet(const ScanSettings&) {
  return {std::nullopt,
          "this fabtrack was built without libibmad/libibnetdisc (apt install libibmad-dev "
          "libibnetdisc-dev, then rebuild)"};
}

}  // namespace fabtrack::fabric
