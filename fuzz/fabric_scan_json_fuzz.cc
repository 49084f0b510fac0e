// Stored subnet scans read back (core/fabric_scan_json.h) and judged: a scan
// that reads must survive a round trip and the fabric detectors, against
// itself and against the empty scan.
#include <cstddef>
#include <cstdint>
#include <string>

#include "analyzer/fabric/fabric_window.h"
#include "core/fabric_scan_json.h"
#include "core/json_instances.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nlohmann::json doc = nlohmann::json::parse(data, data + size, nullptr, false);
  if (doc.is_discarded()) return 0;
  std::string why;
  auto scan = fabtrack::FabricScanFromJson(doc, &why);
  if (!scan) return 0;
  auto back = fabtrack::FabricScanFromJson(fabtrack::FabricScanToJson(*scan), &why);
  if (!back || !(*back == *scan)) __builtin_trap();
  fabtrack::FabricScan empty;
  (void)fabtrack::fabric_analysis::JudgeFabric(&*scan, *scan);
  (void)fabtrack::fabric_analysis::JudgeFabric(&empty, *scan);
  (void)fabtrack::fabric_analysis::JudgeFabric(&*scan, empty);
  return 0;
}
