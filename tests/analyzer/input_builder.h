// Builds AnalysisInput values for detector tests: runs of a series night by
// night with results per size, and the evidence around them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzer/config.h"
#include "core/analysis_input.h"
#include "core/finding.h"

namespace fabtrack::analyzer::testing {

// 2026-11-01T02:00:00Z, the first night of every test history.
inline constexpr double kFirstNight = 1793498400;
inline constexpr double kDay = 86400;

class InputBuilder {
 public:
  InputBuilder();

  // A run started `night` days after kFirstNight (plus `offset_s`), with the
  // given shape. Defaults: nccl-tests all_reduce float, 8 ranks per node,
  // hosts node01..nodeNN, network IB, complete.
  RunView& AddRun(int night, int nodes, double offset_s = 0);
  // One result row for `run` (busbw in GB/s, time in µs).
  ResultPoint& AddResult(const RunView& run, int64_t size_bytes, double time_us, double busbw_gbps);
  ChannelUse& AddChannel(const RunView& run, const std::string& host, int rank,
                         const std::string& family, int nic_index = -1, int channels = 2,
                         bool gdrdma = true);
  NetDeviceView& AddNetDevice(const RunView& run, const std::string& host, int nic_index,
                              const std::string& device, const std::string& link = "IB");

  // A line of `run`'s log (level "warn", "info" or "test") at `line`, printed
  // by `host` ("" when the line had no host prefix).
  LogEventView& AddLogEvent(const RunView& run, const std::string& level, int line,
                            const std::string& host, const std::string& text);

  // A counter delta over `run`'s window on host:device/1 ("hw:np_cnp_sent",
  // "ethtool:rx_prio3_pause", "symbol_error"); per_second over 300 s.
  PortDeltaView& AddPortDelta(const RunView& run, const std::string& host,
                              const std::string& device, const std::string& counter, int64_t delta,
                              bool saturated = false);
  // A port's state after `run` (also recorded in the inventory).
  PortStateView& AddPortState(const RunView& run, const std::string& host,
                              const std::string& device, const std::string& state, double rate_gbps,
                              const std::string& link_layer = "InfiniBand");

  // Makes `run` a step-mode run (fabtrack-allreduce over NCCL: a 7B bf16
  // DDP step, 25 MiB buckets, 100 ms forward, 200 ms backward) with these
  // p50s; compute is the rest of the step.
  StepView& AddStep(RunView& run, double step_ms, double exposed_ms);

  // Judges runs from `night` on (the rest is history).
  void JudgeFrom(int night) { input_.judge_from = kFirstNight + night * kDay - 3600; }
  AnalysisInput& input() { return input_; }
  const AnalysisInput& Build();

 private:
  AnalysisInput input_;
  int64_t next_id_ = 1;
};

std::string IsoOf(double epoch_seconds);

// Runs one registered detector alone (with `config`'s settings for it).
std::vector<Finding> DetectOnly(const std::string& detector, const AnalysisInput& input,
                                const AnalyzerConfig& config = {});

}  // namespace fabtrack::analyzer::testing
