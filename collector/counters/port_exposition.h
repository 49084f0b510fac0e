// The Prometheus exposition text of one reading of a host's RDMA ports: the
// body `fabtrack counters serve` answers on /metrics and `counters metrics`
// prints. node_exporter's node_infiniband_* names where they overlap (so
// existing dashboards and alerts keep working), plus what node_exporter lacks:
// mlx5 hw_counters (RoCE congestion, retransmits), PFC/pause counters from
// ethtool, saturated legacy counters. Absent counters (N/A, unreadable) are
// left out, never exported as 0.
//
// Rendered directly into a reused buffer rather than through prometheus-cpp's
// MetricFamily model and TextSerializer: building and serializing ~500
// families' worth of label strings per scrape cost ~1.1 ms of a 1.27 ms
// scrape (BENCHMARKS.md, "CPU per scrape against node_exporter"); rendering
// in place costs a few microseconds and allocates nothing in steady state.
// tests/counters/port_exposition_test.cc keeps prometheus-cpp's serializer as
// the reference the output must match.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/port_sample.h"

namespace fabtrack {

struct SamplerPlan;         // collector/counters/sysfs_ports.h
struct HwCounterSelection;  // collector/counters/hw_counter_selection.h

// A sysfs counters/ file that node_exporter's infiniband collector exports,
// and the name it exports it under.
struct NodeExporterCounter {
  const char* sysfs_file;  // "port_xmit_wait"
  const char* metric;      // "node_infiniband_port_transmit_wait_total"
  const char* help;
};

// Sorted by sysfs_file (byte order, as std::map orders the sample's counters).
const std::vector<NodeExporterCounter>& NodeExporterCounters();

// How the reading went: exported as fabtrack_scrape_collector_duration_seconds
// and fabtrack_scrape_collector_success{collector="infiniband"}, in the
// manner of node_exporter's node_scrape_collector_*.
// `sampler` (serve: the kept-open sampler; null for a one-shot walk) adds
// fabtrack_exporter_sampler_mode{mode="fast"|"fallback"}.
// `hw_counters` (the --hw-counters in force; null: not said) adds
// fabtrack_exporter_hw_counters_selection{selection="all"|"listed"|"none"}
// and, for a list, fabtrack_exporter_hw_counters_listed{counter="NAME"}.
struct ScrapeOutcome {
  double duration_seconds = 0;
  bool success = true;
  const SamplerPlan* sampler = nullptr;
  const HwCounterSelection* hw_counters = nullptr;
};

class PortExposition {
 public:
  // The exposition text (format 0.0.4) of `host`; valid until the next call.
  // Reuses its buffers: no heap allocation once they have grown to size.
  const std::string& Render(const HostPorts& host, const ScrapeOutcome& scrape);

 private:
  void RenderNodeExporterCounters(const HostPorts& host);

  std::string text_;
  // Per port: device="...",port="..." (index-aligned with host.ports).
  std::vector<std::string> port_labels_;
  // Per port, the value of each NodeExporterCounters() entry (index-aligned).
  std::vector<std::vector<std::optional<uint64_t>>> counter_values_;
};

// One-shot convenience (tests, `counters metrics`).
std::string RenderPortExposition(const HostPorts& host, const ScrapeOutcome& scrape);

}  // namespace fabtrack
