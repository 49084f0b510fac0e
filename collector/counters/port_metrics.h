// The Prometheus edge of port telemetry: node_exporter's node_infiniband_*
// names where they overlap (so existing dashboards keep working), plus what
// node_exporter lacks: mlx5 hw_counters (RoCE congestion and retransmits),
// PFC/pause counters from ethtool, saturated legacy counters. Absent counters
// (N/A, unreadable) are left out, never exported as 0.
#pragma once

#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <functional>
#include <string>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

// Families for one reading of a host's ports. Pure.
std::vector<prometheus::MetricFamily> PortMetricFamilies(const HostPorts& host);

// Reads the ports on every scrape and times itself (node_exporter style
// fabtrack_scrape_collector_duration_seconds / _success).
class PortCollector : public prometheus::Collectable {
 public:
  using Reader = std::function<HostPorts()>;
  explicit PortCollector(Reader reader) : reader_(std::move(reader)) {}
  std::vector<prometheus::MetricFamily> Collect() const override;

 private:
  Reader reader_;
};

// Exposition text (the /metrics body) of the given families.
std::string RenderText(const std::vector<prometheus::MetricFamily>& families);

}  // namespace fabtrack
