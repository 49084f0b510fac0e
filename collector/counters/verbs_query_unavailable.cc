// QueryVerbsPorts in a build without libibverbs (-DFABTRACK_WITH_VERBS=OFF,
// or rdma-core not installed): says so instead of reporting "no devices".
#include "collector/counters/verbs_ports.h"

namespace fabtrack {

VerbsReport QueryVerbsPorts() {
  VerbsReport report;
  report.error = "this fabtrack was built without libibverbs (rdma-core); sysfs only";
  return report;
}

}  // namespace fabtrack
