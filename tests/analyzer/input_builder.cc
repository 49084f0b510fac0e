#include "tests/analyzer/input_builder.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "analyzer/detector.h"
#include "analyzer/input_index.h"
#include "core/clock.h"

namespace fabtrack::analyzer::testing {

std::string IsoOf(double epoch_seconds) {
  return IsoFromSeconds(epoch_seconds, IsoStyle::kSeconds);
}

InputBuilder::InputBuilder() {
  input_.cluster.name = "testcluster";
  input_.runs.reserve(100000);  // RunView references handed out stay valid
}

RunView& InputBuilder::AddRun(int night, int nodes, double offset_s) {
  RunView run;
  run.id = next_id_++;
  run.started_at = kFirstNight + night * kDay + offset_s;
  run.started_at_iso = IsoOf(run.started_at);
  run.source = "nccl-tests";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.nodes = nodes;
  run.ranks_per_node = 8;
  run.ranks = nodes * 8;
  for (int n = 1; n <= nodes; ++n) {
    char host[16];
    std::snprintf(host, sizeof host, "node%02d", n);
    run.hosts.push_back(host);
  }
  run.network = "IB";
  run.transports = {"NET/IB", "P2P/IPC"};
  run.gdrdma = true;
  run.nccl_version = "2.28.9";
  run.sweep_id = "night-" + std::to_string(night);
  run.status = "complete";
  input_.runs.push_back(std::move(run));
  return input_.runs.back();
}

LogEventView& InputBuilder::AddLogEvent(const RunView& run, const std::string& level, int line,
                                        const std::string& host, const std::string& text) {
  LogEventView e;
  e.run_id = run.id;
  e.level = level;
  e.line = line;
  if (!host.empty()) e.host = host;
  e.text = text;
  input_.log_events.push_back(std::move(e));
  return input_.log_events.back();
}

ResultPoint& InputBuilder::AddResult(const RunView& run, int64_t size_bytes, double time_us,
                                     double busbw_gbps) {
  ResultPoint r;
  r.run_id = run.id;
  r.size_bytes = size_bytes;
  r.time_us = time_us;
  r.busbw_gbps = busbw_gbps;
  input_.results.push_back(r);
  return input_.results.back();
}

ChannelUse& InputBuilder::AddChannel(const RunView& run, const std::string& host, int rank,
                                     const std::string& family, int nic_index, int channels,
                                     bool gdrdma) {
  ChannelUse c;
  c.run_id = run.id;
  c.host = host;
  c.rank = rank;
  c.family = family;
  if (nic_index >= 0) c.nic_index = nic_index;
  c.channels = channels;
  c.gdrdma_channels = gdrdma ? channels : 0;
  input_.channels.push_back(c);
  return input_.channels.back();
}

NetDeviceView& InputBuilder::AddNetDevice(const RunView& run, const std::string& host,
                                          int nic_index, const std::string& device,
                                          const std::string& link) {
  input_.net_devices.push_back({run.id, host, nic_index, device, link});
  return input_.net_devices.back();
}

PortDeltaView& InputBuilder::AddPortDelta(const RunView& run, const std::string& host,
                                          const std::string& device, const std::string& counter,
                                          int64_t delta, bool saturated) {
  PortDeltaView d;
  d.run_id = run.id;
  d.host = host;
  d.device = device;
  d.port = 1;
  d.counter = counter;
  if (!saturated) {
    d.delta = delta;
    d.per_second = static_cast<double>(delta) / 300.0;
  }
  d.saturated = saturated;
  input_.port_deltas.push_back(d);
  return input_.port_deltas.back();
}

PortStateView& InputBuilder::AddPortState(const RunView& run, const std::string& host,
                                          const std::string& device, const std::string& state,
                                          double rate_gbps, const std::string& link_layer) {
  PortStateView p;
  p.run_id = run.id;
  p.sampled_at = run.started_at + 300;
  p.host = host;
  p.device = device;
  p.port = 1;
  p.link_layer = link_layer;
  p.state = state;
  p.phys_state = state == "ACTIVE" ? "LinkUp" : "Polling";
  p.rate_gbps = rate_gbps;
  input_.port_states.push_back(p);
  input_.port_inventory.push_back(p);
  return input_.port_states.back();
}

StepView& InputBuilder::AddStep(RunView& run, double step_ms, double exposed_ms) {
  run.source = "fabtrack-allreduce";
  run.backend = "nccl";
  run.collective = "ddp_step";
  run.dtype = "bf16";
  StepView step;
  step.run_id = run.id;
  step.model_params = 7'000'000'000;
  step.grad_dtype = "bf16";
  step.bucket_bytes = 25 << 20;
  step.forward_ms = 100;
  step.backward_ms = 200;
  step.step_ms_p50 = step_ms;
  step.exposed_ms_p50 = exposed_ms;
  step.compute_ms_p50 = step_ms - exposed_ms;
  step.step_ms_p99 = step_ms * 1.04;
  step.idle_share_p50 = exposed_ms / step_ms;
  input_.steps.push_back(step);
  return input_.steps.back();
}

const AnalysisInput& InputBuilder::Build() {
  std::stable_sort(input_.runs.begin(), input_.runs.end(),
                   [](const RunView& a, const RunView& b) { return a.started_at < b.started_at; });
  return input_;
}

std::vector<Finding> DetectOnly(const std::string& detector, const AnalysisInput& input,
                                const AnalyzerConfig& config) {
  for (const DetectorInfo& d : Detectors()) {
    if (d.name != detector) continue;
    InputIndex index(input);
    std::vector<Finding> findings;
    d.detect(index, config.SettingsFor(d.name), &findings);
    for (Finding& f : findings) {
      if (f.kind.empty()) f.kind = d.name;
    }
    std::stable_sort(findings.begin(), findings.end(), FindingBefore);
    return findings;
  }
  throw std::invalid_argument("no detector named " + detector);
}

}  // namespace fabtrack::analyzer::testing
