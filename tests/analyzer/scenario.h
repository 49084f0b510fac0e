// Labelled scenarios for measuring detection quality: a cluster's nightly
// sweeps with realistic noise, and optionally one fault of a known kind
// injected from a known night at a known node count. Used by the detection
// quality test and by bench/analyzer/detection_quality (BENCHMARKS.md).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "analyzer/config.h"
#include "core/analysis_input.h"

namespace fabtrack::analyzer::testing {

enum class Fault {
  kNone,
  kBusbwDrop,        // large-message busbw falls by `magnitude`
  kLatencyRise,      // small-message latency rises by `magnitude`
  kSocketFallback,   // one host's ranks go NET/Socket
  kGdrdmaLost,       // one host's NET/IB channels lose GDRDMA
  kSharedNic,        // one host's ranks pile on one NIC
  kScalingCollapse,  // busbw at the largest node count only falls by `magnitude`
  kJitter,           // per-iteration CV and p99/p50 rise at small sizes
  kPortErrors,       // one port counts symbol errors and link recoveries
  // Issue 32: the shape of a fabric regression, at every multi-node count at
  // once (fault_nodes is not used), every size of the band alike.
  kCoherentBusbwDrop,    // busbw falls by `magnitude` on every multi-node run
  kCoherentLatencyRise,  // latency rises by `magnitude` on every multi-node run
  // busbw falls by `magnitude` at the medium sizes only (64 KiB < size < 64
  // MiB: 128 KiB .. 32 MiB here), on every multi-node run: the shape of an
  // NCCL protocol or algorithm fault at the LL128 sizes (a tuning change,
  // LL128 lost); the small and large sizes are untouched.
  kCoherentMidBusbwDrop,
  // Issue 32 item 3: a socket cluster (MPI over TCP, every run with its
  // nodes' CPU windows); from the fault night one node (fault_nodes, so the
  // runs of that many nodes and more) is busy with other work, and those
  // runs' latency rises and busbw falls by `magnitude`. Found when cpu_bound
  // names that node; the runs' regressions and scaling drop are its effects,
  // not the fabric's (they count as false alarms unless cpu_bound explains
  // them).
  kCpuBusyNode,
  // Issue 32 item 2: a healthy fabric whose runs are sometimes noisy within
  // themselves: from the fault night, each run (any node count) with
  // probability 0.3 has iterations scattered by a CV of 30% at every size,
  // and its figures are off by that spread's error of the mean (CV /
  // sqrt(iterations) = 6.7%, common to its sizes, either way). Found when
  // latency_jitter flags such a run; any regression is a false alarm: the
  // run's deviation is within-run noise, not a shift of the fabric.
  kNoisyRuns,
};

// A further fault, from `first_night` to `last_night` (inclusive), in the
// runs at `nodes` nodes, on node `host_node` for host-level faults.
struct FaultWindow {
  Fault fault = Fault::kNone;
  int first_night = 0, last_night = 0;
  int nodes = 8;
  int host_node = 8;
  double magnitude = 0.1;
};

struct ScenarioSpec {
  Fault fault = Fault::kNone;
  double magnitude = 0.1;  // relative change for busbw/latency/scaling faults
  int nights = 45;
  int fault_night = 30;  // first faulty night
  int fault_nodes = 8;   // node count whose runs carry the fault
  uint64_t seed = 1;
  double busbw_noise = 0.01;             // night-to-night σ of busbw (relative)
  double latency_noise = 0.02;           // night-to-night σ of small-message latency
  std::vector<FaultWindow> more_faults;  // besides `fault` (Evaluate scores `fault` only)
};

struct Scenario {
  AnalysisInput input;  // every night, judge_from unset
  ScenarioSpec spec;
  std::vector<std::string> expected_kinds;  // detectors that should flag the fault
  // Detectors that see the fault's effect on a band it also moves without
  // being meant to find it: their findings while the fault lasts are neither
  // a detection nor a false alarm (a latency rise lowers medium-size busbw:
  // time = latency + size / bandwidth).
  std::vector<std::string> effect_kinds;
  std::string fault_host;  // the host a host-level fault is on
};

Scenario MakeScenario(const ScenarioSpec& spec);
const char* FaultName(Fault fault);
// Node counts of every night's sweep.
const std::vector<int>& ScenarioNodeCounts();

// Replays the scenario night by night (each night judged against all before
// it) with `config`'s thresholds and scores the warning-or-worse findings.
struct Score {
  int run_nights = 0;       // runs judged
  int false_alarms = 0;     // findings not explained by the injected fault
  int detected_night = -1;  // first night the fault was flagged (-1: never)
  std::vector<std::string> false_alarm_examples;
  std::map<std::string, int> false_alarms_by_kind;  // finding kind -> false alarms
};
Score Evaluate(const Scenario& scenario, int first_judged_night = 10,
               const AnalyzerConfig& config = {});

}  // namespace fabtrack::analyzer::testing
