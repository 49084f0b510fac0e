// Every switch port of a subnet scan as Prometheus exposition text (format
// 0.0.4), under the names treydock/infiniband_exporter's switch collector
// uses, so its dashboards and recording rules work unchanged:
// infiniband_switch_port_<counter>_total{guid,port} (data in bytes: the
// PMA's 4-octet words x 4), infiniband_switch_info{guid,switch,lid}, and
// infiniband_switch_uplink_info{guid,port,switch,uplink,uplink_guid,
// uplink_type,uplink_port,uplink_lid} naming the far end of every cabled
// switch port (a CA or another switch), which the counters join on
// (guid, port). Counters a port did not answer are left out, never 0. Plus
// fabtrack's own: the scan's duration, MADs, and what did not answer. Pure:
// `fabric scan --format prometheus` prints it, `--textfile DIR` writes it.
#pragma once

#include <string>

#include "core/fabric_scan.h"

namespace fabtrack::fabric {

std::string RenderSwitchExposition(const FabricScan& scan);

// fabtrack_fabric_scan_success 1 or 0, which `fabric serve` adds to every
// scrape: a subnet that cannot be scanned is an alertable 0, not a failed
// scrape and not the last scan's counters served as if new.
std::string RenderScanSuccess(bool scanned);

// The textfile-collector file name `--textfile DIR` writes.
inline constexpr const char* kSwitchTextfileName = "fabtrack_fabric.prom";

}  // namespace fabtrack::fabric
