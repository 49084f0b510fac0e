#include "tests/analyzer/scenario.h"

#include <algorithm>
#include <cmath>
#include <random>

#include "analyzer/analyze.h"
#include "analyzer/input_index.h"
#include "tests/analyzer/input_builder.h"

namespace fabtrack::analyzer::testing {
namespace {

constexpr int kRanksPerNode = 8;
constexpr int kSizes = 16;  // 8 B .. 8 GiB in steps of 4x

std::string Host(int n) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "node%02d", n);
  return buf;
}

}  // namespace

const std::vector<int>& ScenarioNodeCounts() {
  static const std::vector<int> counts = {1, 2, 4, 8, 16};
  return counts;
}

const char* FaultName(Fault fault) {
  switch (fault) {
    case Fault::kNone:
      return "healthy";
    case Fault::kBusbwDrop:
      return "busbw drop";
    case Fault::kLatencyRise:
      return "latency rise";
    case Fault::kSocketFallback:
      return "socket fallback";
    case Fault::kGdrdmaLost:
      return "GDRDMA lost";
    case Fault::kSharedNic:
      return "shared NIC";
    case Fault::kScalingCollapse:
      return "scaling collapse";
    case Fault::kJitter:
      return "latency jitter";
    case Fault::kPortErrors:
      return "port errors";
    case Fault::kCoherentBusbwDrop:
      return "busbw drop, all multi-node";
    case Fault::kCoherentLatencyRise:
      return "latency rise, all multi-node";
    case Fault::kCoherentMidBusbwDrop:
      return "medium-size busbw drop, all multi-node";
    case Fault::kCpuBusyNode:
      return "CPU-busy node, socket cluster";
    case Fault::kNoisyRuns:
      return "noisy runs (within-run spread), healthy fabric";
  }
  return "?";
}

Scenario MakeScenario(const ScenarioSpec& spec) {
  Scenario s;
  s.spec = spec;
  std::mt19937_64 rng(spec.seed);
  // Night-to-night noise of a healthy fabric at a fixed node count: busbw
  // ~1%, small-message latency ~2% (σ); per size on top, smaller. One night
  // in fifty is an outlier (a busy neighbour job): a further 4% off.
  std::normal_distribution<double> bw_night(0, spec.busbw_noise), bw_size(0, 0.005);
  std::normal_distribution<double> lat_night(0, spec.latency_noise), lat_size(0, 0.01);
  std::normal_distribution<double> cv_noise(0, 0.01);
  std::uniform_real_distribution<double> unit(0, 1);
  std::normal_distribution<double> other_work(0.2, 0.1);  // CPUs of a quiet node's daemons
  const bool socket_cluster = spec.fault == Fault::kCpuBusyNode;
  constexpr int kCpusPerNode = 32;
  // The harness times 20 iterations per size (its default). The noisy runs
  // draw from their own generator, so that every other scenario's numbers
  // are those it always had.
  constexpr int kIterations = 20;
  std::mt19937_64 noisy_rng(spec.seed * 7919 + 17);
  std::normal_distribution<double> unit_normal(0, 1);
  InputBuilder b;
  b.input().cluster.fabric = "infiniband";
  b.input().cluster.rail_optimized = true;
  s.fault_host = Host(spec.fault_nodes);  // the last node of the faulty runs
  switch (spec.fault) {
    case Fault::kBusbwDrop:
    case Fault::kCoherentBusbwDrop:
      s.expected_kinds = {"busbw_regression", "scaling_drop"};
      // At 32 MiB on 8 nodes 80% of the time is size / bandwidth.
      s.effect_kinds = {"midsize_busbw_regression"};
      break;
    case Fault::kLatencyRise:
    case Fault::kCoherentLatencyRise:
      s.expected_kinds = {"latency_regression", "scaling_drop"};
      // At 128 KiB .. 2 MiB on 8 nodes most of the time is the latency.
      s.effect_kinds = {"midsize_busbw_regression"};
      break;
    case Fault::kCoherentMidBusbwDrop:
      s.expected_kinds = {"midsize_busbw_regression"};
      break;
    case Fault::kSocketFallback:
      s.expected_kinds = {"socket_fallback", "busbw_regression", "latency_regression",
                          "midsize_busbw_regression", "scaling_drop"};
      break;
    case Fault::kGdrdmaLost:
      s.expected_kinds = {"gdrdma_disabled"};
      break;
    case Fault::kSharedNic:
      s.expected_kinds = {"shared_nic"};
      break;
    case Fault::kScalingCollapse:
      s.expected_kinds = {"scaling_drop", "busbw_regression"};
      break;
    case Fault::kJitter:
      s.expected_kinds = {"latency_jitter"};
      break;
    case Fault::kPortErrors:
      s.expected_kinds = {"port_errors"};
      break;
    case Fault::kNoisyRuns:
      s.expected_kinds = {"latency_jitter"};
      break;
    case Fault::kCpuBusyNode:
      s.expected_kinds = {"cpu_bound"};
      b.input().cluster.fabric = "ethernet";
      b.input().cluster.rail_optimized = false;
      break;
    case Fault::kNone:
      break;
  }
  std::vector<FaultWindow> windows = spec.more_faults;
  if (spec.fault != Fault::kNone) {
    windows.insert(windows.begin(),
                   FaultWindow{spec.fault, spec.fault_night, spec.nights, spec.fault_nodes,
                               spec.fault_nodes, spec.magnitude});
  }
  for (int night = 0; night < spec.nights; ++night) {
    const bool outlier_night = unit(rng) < 0.02;
    for (size_t slot = 0; slot < ScenarioNodeCounts().size(); ++slot) {
      const int nodes = ScenarioNodeCounts()[slot];
      // The fault of this run, if any (the first window that covers it).
      const FaultWindow* window = nullptr;
      for (const FaultWindow& w : windows) {
        if (night >= w.first_night && night <= w.last_night &&
            (nodes == w.nodes ||
             ((w.fault == Fault::kSocketFallback || w.fault == Fault::kCpuBusyNode) &&
              nodes >= w.nodes) ||
             ((w.fault == Fault::kCoherentBusbwDrop || w.fault == Fault::kCoherentLatencyRise ||
               w.fault == Fault::kCoherentMidBusbwDrop) &&
              nodes > 1) ||
             w.fault == Fault::kNoisyRuns)) {
          window = &w;
          break;
        }
      }
      bool faulty = window != nullptr;
      if (faulty && window->fault == Fault::kNoisyRuns) {
        faulty = std::uniform_real_distribution<double>(0, 1)(noisy_rng) < 0.3;
      }
      const Fault fault = faulty ? window->fault : Fault::kNone;
      const double magnitude = faulty ? window->magnitude : 0;
      const std::string fault_host = faulty ? Host(window->host_node) : "";
      RunView& run = b.AddRun(night, nodes, slot * 600.0);
      run.source = "fabtrack-allreduce";
      run.iters = kIterations;
      run.backend = socket_cluster ? "mpi" : "nccl";
      if (socket_cluster) {
        run.network.reset();
        run.transports.clear();
        run.gdrdma.reset();
        run.nccl_version.reset();
        // Every node's CPUs over the run: daemons on a quiet node, a third
        // of the busy node's CPUs on other work.
        std::vector<NodeCpuWindow>& cpu = b.input().run_cpu_windows[run.id];
        for (int n = 1; n <= nodes; ++n) {
          NodeCpuWindow w{.host = Host(n),
                          .seconds = 120,
                          .cpus = kCpusPerNode,
                          .busy_fraction = 0.3,
                          .other_cpus = std::max(0.0, other_work(rng)),
                          .load1_before = 1,
                          .load1_after = 9};
          if (faulty && Host(n) == fault_host) {
            w.other_cpus = kCpusPerNode / 3.0;
            w.busy_fraction = 0.6;
            w.top_others = {{"backup-agent", w.other_cpus * w.seconds}};
          }
          cpu.push_back(std::move(w));
        }
      }
      run.ranks_per_node = kRanksPerNode;
      run.ranks = nodes * kRanksPerNode;
      const double ranks = nodes * kRanksPerNode;
      const double factor = 2 * (ranks - 1) / ranks;
      const double doublings = std::log2(static_cast<double>(nodes));
      double peak = nodes == 1 ? 420.0 : 370.0 * std::pow(0.985, doublings);
      double latency = nodes == 1 ? 12.0 : 18.0 + 6.0 * doublings;
      double bw_scale = 1 + bw_night(rng), lat_scale = 1 + lat_night(rng);
      if (outlier_night) {
        bw_scale *= 0.96;
        lat_scale *= 1.04;
      }
      double cv = 0.03;
      if (faulty) {
        switch (fault) {
          case Fault::kBusbwDrop:
          case Fault::kScalingCollapse:
          case Fault::kCoherentBusbwDrop:
            bw_scale *= 1 - magnitude;
            break;
          case Fault::kLatencyRise:
          case Fault::kCoherentLatencyRise:
            lat_scale *= 1 + magnitude;
            break;
          case Fault::kCpuBusyNode:
            lat_scale *= 1 + magnitude;
            bw_scale *= 1 - magnitude;
            break;
          case Fault::kSocketFallback:
            bw_scale *= 0.3;
            lat_scale *= 2.5;
            break;
          case Fault::kJitter:
            cv = 0.9;
            break;
          case Fault::kNoisyRuns: {
            cv = 0.3;
            const double error = cv / std::sqrt(kIterations) * unit_normal(noisy_rng);
            lat_scale *= 1 + error;
            bw_scale /= 1 + error;
            break;
          }
          default:
            break;
        }
      }
      for (int i = 0; i < kSizes; ++i) {
        const int64_t size = int64_t{8} << (2 * i);
        const double algbw = peak * bw_scale / factor;
        double t = latency * lat_scale * (1 + lat_size(rng)) +
                   static_cast<double>(size) / (algbw * 1e3) * (1 + bw_size(rng));
        if (fault == Fault::kScalingCollapse && faulty && size < (int64_t{64} << 20)) {
          t = latency * lat_scale + static_cast<double>(size) / (peak / factor * 1e3);
        }
        if (fault == Fault::kCoherentMidBusbwDrop && faulty && size > (int64_t{64} << 10) &&
            size < (int64_t{64} << 20)) {
          t /= 1 - magnitude;  // busbw = size x factor / t falls by `magnitude`
        }
        ResultPoint& r = b.AddResult(run, size, t, static_cast<double>(size) / t / 1e3 * factor);
        const double run_cv = std::max(0.005, cv + cv_noise(rng));
        r.lat_p50_us = t;
        r.lat_cv = run_cv;
        r.lat_p99_us = t * (1 + 3 * run_cv);
        if (nodes > 1) {
          r.straggler_host = Host(1 + static_cast<int>(rng() % nodes));
          r.straggler_excess_us = t * 0.01;
        }
      }
      // Transport evidence of every multi-node run: rank r of a node sends
      // through NIC r (rail-optimized), with GDRDMA.
      if (nodes > 1 && !socket_cluster) {
        for (int n = 1; n <= nodes; ++n) {
          const std::string host = Host(n);
          const bool this_host = faulty && host == fault_host;
          for (int local = 0; local < kRanksPerNode; ++local) {
            const int rank = (n - 1) * kRanksPerNode + local;
            std::string family = "NET/IB";
            int nic = local;
            bool gdr = true;
            if (this_host && fault == Fault::kSocketFallback) family = "NET/Socket";
            if (this_host && fault == Fault::kGdrdmaLost) gdr = false;
            if (this_host && fault == Fault::kSharedNic) nic = 0;
            b.AddChannel(run, host, rank, family, nic, 2, gdr && family == "NET/IB");
            if (n == 1 || n == nodes)
              b.AddNetDevice(run, host, local, "mlx5_" + std::to_string(local));
          }
        }
      }
      // Port deltas of the run's window for its hosts: clean counters, plus
      // the injected errors.
      for (int n = 1; n <= nodes; ++n) {
        for (const char* counter : {"symbol_error", "link_downed", "port_rcv_errors",
                                    "port_xmit_discards", "link_error_recovery"}) {
          int64_t delta = 0;
          if (faulty && fault == Fault::kPortErrors && Host(n) == fault_host) {
            delta = std::string(counter) == "symbol_error"          ? 5000
                    : std::string(counter) == "link_error_recovery" ? 3
                                                                    : 0;
          }
          PortDeltaView d;
          d.run_id = run.id;
          d.host = Host(n);
          d.device = "mlx5_0";
          d.port = 1;
          d.counter = counter;
          d.delta = delta;
          d.per_second = delta / 300.0;
          b.input().port_deltas.push_back(d);
        }
      }
    }
  }
  s.input = b.Build();
  return s;
}

Score Evaluate(const Scenario& scenario, int first_judged_night, const AnalyzerConfig& config) {
  Score score;
  const AnalysisInput& all = scenario.input;
  for (int night = first_judged_night; night < scenario.spec.nights; ++night) {
    const double night_start = kFirstNight + night * kDay - 3600;
    const double night_end = night_start + kDay;
    AnalysisInput input;
    input.cluster = all.cluster;
    input.judge_from = night_start;
    std::vector<int64_t> ids;
    for (const RunView& r : all.runs) {
      if (r.started_at < night_end) input.runs.push_back(r);
    }
    auto in_window = [&](int64_t run_id) {
      for (const RunView& r : input.runs) {
        if (r.id == run_id) return true;
      }
      return false;
    };
    for (const ResultPoint& p : all.results) {
      if (in_window(p.run_id)) input.results.push_back(p);
    }
    // Evidence is loaded for the judged night only, as the database edge does.
    std::vector<int64_t> judged;
    for (const RunView& r : input.runs) {
      if (r.started_at >= night_start) judged.push_back(r.id);
    }
    auto judged_run = [&](int64_t id) {
      return std::find(judged.begin(), judged.end(), id) != judged.end();
    };
    for (const ChannelUse& c : all.channels) {
      if (judged_run(c.run_id)) input.channels.push_back(c);
    }
    for (const NetDeviceView& d : all.net_devices) {
      if (judged_run(d.run_id)) input.net_devices.push_back(d);
    }
    for (const PortDeltaView& d : all.port_deltas) {
      if (judged_run(d.run_id)) input.port_deltas.push_back(d);
    }
    for (const auto& [run_id, windows] : all.run_cpu_windows) {
      if (judged_run(run_id)) input.run_cpu_windows[run_id] = windows;
    }
    score.run_nights += static_cast<int>(judged.size());
    AnalysisResult result = Analyze(input, config);
    for (const Finding& f : result.findings) {
      if (f.severity == Severity::kInfo) continue;
      const bool fault_live =
          scenario.spec.fault != Fault::kNone && night >= scenario.spec.fault_night;
      auto expected = [&](const std::string& kind) {
        return std::find(scenario.expected_kinds.begin(), scenario.expected_kinds.end(), kind) !=
               scenario.expected_kinds.end();
      };
      // A CPU-bound verdict must name the busy node; what a flagged cause
      // explains (its run's regressions) is the fault's too.
      bool explained = fault_live && expected(f.kind);
      if (explained && f.kind == "cpu_bound") {
        const nlohmann::json& busy = f.evidence.value("busy_hosts", nlohmann::json::array());
        explained = std::find(busy.begin(), busy.end(), scenario.fault_host) != busy.end();
      }
      const bool effect = fault_live && f.evidence.contains("explained_by") &&
                          f.evidence["explained_by"].is_string() &&
                          expected(f.evidence["explained_by"].get<std::string>());
      const bool band_effect =
          fault_live && std::find(scenario.effect_kinds.begin(), scenario.effect_kinds.end(),
                                  f.kind) != scenario.effect_kinds.end();
      if (effect || band_effect) continue;
      if (explained) {
        if (score.detected_night < 0) score.detected_night = night;
        continue;
      }
      ++score.false_alarms;
      ++score.false_alarms_by_kind[f.kind];
      if (score.false_alarm_examples.size() < 5) {
        score.false_alarm_examples.push_back("night " + std::to_string(night) + ": " + f.kind +
                                             " " + f.subject + ": " + f.message);
      }
    }
  }
  return score;
}

}  // namespace fabtrack::analyzer::testing
