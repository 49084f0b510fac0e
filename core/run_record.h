// A run as fabtrack stores it: metadata, per-size results, ranks and the
// transport evidence. Built from parsed files (ingest) or by the harness,
// which derive every value (the per-size LatencySummary included); written by
// the store and the run document (core/run_record_json.h), which only write.
// Plain data.
//
// Adding a field to RunRecord or to a struct it holds (here and in
// core/model.h): carry it in core/run_record_json.cc (writer and reader) and
// name it in tests/support/run_record_filler.h. The filler's structured
// bindings stop the build until it is named there; the round-trip test
// (tests/core/run_record_json_test.cc) fails until the document carries it.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace fabtrack {

// Per-size latency distribution over timed iterations (harness).
struct LatencySummary {
  std::optional<double> mean_us, p50_us, p90_us, p99_us, min_us, max_us, stddev_us, cv;
  std::optional<double> ip_p50_us, ip_p99_us, ip_cv;
  std::optional<std::string> straggler_host;
  std::optional<int> straggler_rank;
  std::optional<double> straggler_excess_us;

  bool operator==(const LatencySummary&) const = default;
};

struct ResultRow {
  SizeRow row;
  LatencySummary latency;

  bool operator==(const ResultRow&) const = default;
};

struct LatencySample {
  int row_index = 0;
  bool in_place = false;
  int iteration = 0;
  double latency_us = 0;

  bool operator==(const LatencySample&) const = default;
};

struct RankTiming {
  int row_index = 0;
  bool in_place = false;
  int rank = 0;
  std::optional<std::string> host;
  std::optional<double> mean_us, p50_us, p99_us, max_us;
  // Mean time the other ranks waited for this one (see harness/latency_stats.h).
  std::optional<double> lateness_us;

  bool operator==(const RankTiming&) const = default;
};

// One pair of nodes' point-to-point exchange (harness link probe).
struct LinkProbeResult {
  std::string host_a, host_b;
  int64_t bytes = 0;
  double seconds = 0;
  double gbps = 0;

  bool operator==(const LinkProbeResult&) const = default;
};

// The variables that change how NCCL and its launchers move data, recorded
// with a run (runs.nccl_env). Anything else in an environment is noise (or a
// secret) and is never stored.
bool IsRecordedEnvironmentVariable(const std::string& name);

// A simulated data-parallel training step (harness step mode): gradients of
// `model_params` parameters in `grad_dtype`, reduced in buckets while the
// backward pass produces them, as DistributedDataParallel does. Per-step
// figures are the slowest rank's (the step ends for everyone when the last
// reduction completes).
struct StepSample {
  int step = 0;
  double step_ms = 0;     // forward + backward + exposed communication
  double compute_ms = 0;  // forward + backward as run
  double exposed_ms = 0;  // reduction time not hidden behind the backward pass

  bool operator==(const StepSample&) const = default;
};

struct StepSummary {
  int64_t model_params = 0;
  std::string grad_dtype;  // "fp32" | "bf16" | "fp16"
  int64_t grad_bytes = 0;
  int64_t bucket_bytes = 0;
  int buckets = 0;
  double forward_ms = 0, backward_ms = 0;
  int steps = 0;
  double step_ms_p50 = 0, step_ms_p90 = 0, step_ms_p99 = 0, step_ms_max = 0, step_ms_mean = 0;
  double compute_ms_p50 = 0;
  double exposed_ms_p50 = 0, exposed_ms_p99 = 0, exposed_ms_mean = 0;
  // Share of the step the GPUs wait on the network: exposed / step.
  double idle_share_p50 = 0, idle_share_mean = 0;

  bool operator==(const StepSummary&) const = default;
};

// What exposed communication costs: GPU-hours lost per 1000 steps when `gpus`
// GPUs wait `exposed_ms` each step.
inline double LostGpuHoursPer1000Steps(double exposed_ms, int gpus) {
  return exposed_ms * 1000.0 * gpus / 3.6e6;
}

enum class RunStatus { kComplete, kPartial, kFailed };
const char* RunStatusName(RunStatus status);

struct RunRecord {
  // Special members out of line (the .cc, `= default`): this struct is in most
  // of the project's units, and the implicit ones were compiled again in each
  // (BENCHMARKS.md, "Fresh build CPU", round seven). Declaring them ends
  // aggregate initialisation: set the fields after construction.
  RunRecord();
  RunRecord(const RunRecord&);
  RunRecord(RunRecord&&) noexcept;
  RunRecord& operator=(const RunRecord&);
  RunRecord& operator=(RunRecord&&) noexcept;
  ~RunRecord();

  std::string cluster;
  // ISO 8601 / RFC 3339 timestamp with offset, e.g. "2026-12-01T02:00:00Z".
  std::string started_at;
  std::optional<std::string> ended_at;
  std::string source;  // "nccl-tests", "fabtrack-allreduce", "nccl-log"
  std::optional<std::string> backend;
  std::optional<std::string> collective, dtype, redop;
  std::optional<int> ranks, nodes, gpus_per_node, ranks_per_node;
  std::vector<std::string> hosts;
  std::optional<std::string> gpu_model, nccl_version, cuda_version, driver_version, mpi_version,
      nccl_tests_version, network;
  std::vector<std::string> transports;
  std::optional<bool> gdrdma;
  std::optional<std::string> command_line;
  std::map<std::string, std::string> nccl_env;
  // The nodes' firmware, links, kernel and topology (core/node_facts.h).
  std::map<std::string, std::string> node_facts;
  std::optional<std::string> slurm_job_id, slurm_step_id;
  std::map<std::string, std::string> tags;
  std::optional<std::string> sweep_id;  // runs of one `fabtrack sweep` share it
  std::map<std::string, std::string> parameters;
  std::optional<int> warmup_iters, iters;
  std::optional<double> avg_busbw_gbps;
  std::optional<bool> oob_ok;
  std::optional<int64_t> oob_count;
  std::optional<std::string> source_file;
  std::string content_hash;  // 64 hex chars
  int table_index = 0;
  RunStatus status = RunStatus::kComplete;

  std::vector<RankDevice> rank_devices;
  std::vector<ResultRow> results;
  std::vector<LatencySample> latency_samples;
  std::vector<RankTiming> rank_timings;
  std::vector<NetDevice> net_devices;
  std::vector<ChannelObservation> channels;
  // The log's lines that say the run failed or what NCCL could not use:
  // WARN lines, NcclLogInfo::notices (stored in run_log_events).
  std::vector<LogMessage> log_events;
  std::vector<LinkProbeResult> link_probes;
  // The node whose link is slow per the probe (needs 3+ nodes to tell).
  std::optional<std::string> link_straggler_host;
  // Physical machines under the ranks (by kernel boot id; see
  // harness/machine_placement.h), the most crowded one's ranks and its CPUs.
  std::optional<int> machines, max_ranks_per_machine, cpus_per_machine;
  // Step mode only (collective "ddp_step", no per-size results).
  std::optional<StepSummary> step;
  std::vector<StepSample> step_samples;

  bool operator==(const RunRecord&) const = default;
};

}  // namespace fabtrack
