// `sweep --fabric-scan`: the subnet scanned just before and just after every
// launch (collector/fabric), and each run's share of the two scans (the
// cables of the leaves its nodes hang on, uplinks included, both ends)
// attached to its batch, stored with the run (store/run_fabric_window_store).
#pragma once

#include <memory>
#include <ostream>

#include "app/sweep_flow.h"
#include "collector/fabric/subnet_scan.h"

namespace fabtrack::app {

// A scan that fails says why on `err` and the run is stored without its
// switch side; hosts no HCA's node description names are said there too.
std::shared_ptr<RunBracket> MakeFabricScanBracket(fabric::ScanSettings settings, std::ostream& err);

}  // namespace fabtrack::app
