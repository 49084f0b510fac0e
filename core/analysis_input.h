// What the analyzer reads: the stored runs of one cluster and what was seen
// around them, as plain data. Loaded by store/analysis_reader (the database
// edge) or built directly by tests and the scenario generator. Times are
// seconds since the Unix epoch (UTC) so that detectors compare numbers, not
// strings; the ISO text is kept for messages.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/host_list.h"
#include "core/locate.h"
#include "core/node_cpu.h"
#include "core/node_topology.h"
#include "core/ras_snapshot.h"
#include "core/run_fabric_window.h"

namespace fabtrack {

struct ClusterInfo {
  std::string name;
  // "infiniband" | "roce" | "ethernet" | "mixed"; unset when nobody declared it.
  std::optional<std::string> fabric;
  std::optional<bool> rail_optimized;
};

struct RunView {
  int64_t id = 0;
  double started_at = 0;               // epoch seconds
  std::string started_at_iso;          // "2026-11-30T02:00:00Z"
  std::string source;                  // "nccl-tests", "fabtrack-allreduce"
  std::optional<std::string> backend;  // "nccl" | "mpi" (harness)
  std::optional<std::string> collective, dtype;
  std::optional<int> nodes, ranks, ranks_per_node;
  HostList hosts;
  std::optional<std::string> network;   // what NCCL selected: "IB", "Socket", ...
  std::vector<std::string> transports;  // distinct channel families: "NET/IB", "P2P/IPC"
  std::optional<bool> gdrdma;
  std::optional<std::string> nccl_version;
  // The facts a regression's "what changed" compares (issue 21): the CUDA
  // runtime and driver, and the NCCL_* settings as stored (runs.nccl_env,
  // jsonb text: equal maps print equal, so runs compare by text and only a
  // differing pair is parsed).
  std::optional<std::string> cuda_version, driver_version;
  // NCCL's network plugin as its log named it ("internal" without one).
  std::optional<std::string> net_plugin;
  std::string nccl_env_json = "{}";
  // The nodes' firmware, links, kernel and topology (runs.node_facts, jsonb
  // text, compared the same way; core/node_facts.h).
  std::string node_facts_json = "{}";
  std::optional<std::string> sweep_id;
  std::optional<std::string> link_straggler_host;
  std::string status;  // "complete" | "partial" | "failed"
  // nccl-tests' trailer "# Out of bounds values : N OK|FAILED"; absent when
  // the run printed none (cut short, or not nccl-tests).
  std::optional<bool> oob_ok;
  std::optional<int64_t> oob_count;
  // More ranks than CPUs on one physical machine (harness runs only): its
  // small-message latency measures the scheduler, so latency is not judged.
  bool oversubscribed = false;
  std::optional<int> max_ranks_per_machine, cpus_per_machine;
  // Timed iterations per size (runs.iters): with a size's per-iteration CV,
  // how steady the run's own figure is (analyzer/stats/noise_model.h).
  std::optional<int> iters;
  // Summarised history (schema 015): false when the reader left this run's
  // result rows out because stored per-run summaries stand for them
  // (analyzer/input_index.h Summary); asking for its results is then a
  // SummaryMiss, which sends the analysis back to the full history.
  bool results_loaded = true;
  // Stored summaries stand for this run's history figures (the run is older
  // than the cut of the summarised history).
  bool summarized = false;
};

// One size of one run (out-of-place figures, the ones nccl-tests users quote).
struct ResultPoint {
  int64_t run_id = 0;
  int64_t size_bytes = 0;
  std::optional<double> time_us, busbw_gbps;
  std::optional<double> lat_p50_us, lat_p99_us, lat_cv;  // harness only
  std::optional<std::string> straggler_host;
  std::optional<double> straggler_excess_us;
  // nccl-tests' #wrong, the larger of out-of-place and in-place; absent with -c 0.
  std::optional<int64_t> wrong;
};

// A line of a run's log that says something failed or what NCCL could not
// use (store: run_log_events), with where it was printed. The analyzer reads
// its meaning from `text` (analyzer/log_events.h), so that a new reading
// needs no new column.
struct LogEventView {
  int64_t run_id = 0;
  // "warn" (an NCCL WARN line), "info" (an NCCL INFO line kept for what it
  // says about the network), "test" (an nccl-tests line: "Test NCCL failure",
  // "NCCL error").
  std::string level;
  std::optional<int> line;          // 1-based line in the source file
  std::optional<std::string> host;  // only from a real host:pid:tid prefix
  std::string text;                 // after the NCCL prefix
};

// NET/* and local channel lines of a run's NCCL log, summed per rank and NIC.
struct ChannelUse {
  int64_t run_id = 0;
  std::optional<std::string> host;
  int rank = 0;
  std::string family;                 // "NET/IB", "NET/Socket", "P2P/IPC", ...
  std::optional<int> nic_index;       // NET channels: NCCL's NIC number
  std::optional<std::string> device;  // that NIC's name from the NIC list, "mlx5_0"
  int channels = 0;
  int gdrdma_channels = 0;
};

// A host's NIC list as NCCL printed it ("NET/IB : Using [0]mlx5_0:1/IB ...").
struct NetDeviceView {
  int64_t run_id = 0;
  std::string host;
  int nic_index = 0;
  std::string device;
  std::optional<std::string> link;  // "IB" | "RoCE"
};

// A port counter delta over a run's window (store: run_port_deltas).
struct PortDeltaView {
  int64_t run_id = 0;
  std::string host, device;
  int port = 0;
  std::string counter;  // sysfs name; "hw:" prefix for hw_counters, "ethtool:" for ethtool
  std::optional<int64_t> delta;
  std::optional<double> per_second;
  bool saturated = false;
};

// A port counter delta between two stored snapshots of the port that no run
// brackets (store: run_port_deltas with run_id NULL, migration 014): imported
// dumps of two times, `counters snapshot --store`. `delta.run_id` is 0.
struct SnapshotDeltaView {
  double window_start = 0, window_end = 0;  // seconds since the epoch
  std::string window_start_iso, window_end_iso;
  PortDeltaView delta;
};

// A port's state as sampled after a run (or the newest sample in the window).
struct PortStateView {
  std::optional<int64_t> run_id;
  double sampled_at = 0;
  std::string host, device;
  int port = 0;
  std::optional<std::string> link_layer, state, phys_state;
  std::optional<double> rate_gbps;
};

// A step-mode run's summary (simulated data-parallel training step).
struct StepView {
  int64_t run_id = 0;
  int64_t model_params = 0;
  std::string grad_dtype;
  int64_t bucket_bytes = 0;
  double forward_ms = 0, backward_ms = 0;
  double step_ms_p50 = 0, step_ms_p99 = 0, compute_ms_p50 = 0;
  double exposed_ms_p50 = 0;  // communication not hidden behind compute
  double idle_share_p50 = 0;  // exposed / step
};

// A real training job's collectives (NCCL Inspector), per collective and
// size: what `fabtrack inspector ingest` stored.
struct InspectorGroupView {
  std::string communicator, collective;
  int64_t message_bytes = 0;  // per rank, as the plugin reports it
  std::optional<int> nranks;
  int64_t count = 0;
  double median_us = 0;
  std::optional<double> median_busbw_gbps;
  std::optional<int> slowest_rank;
  std::optional<std::string> slowest_rank_host, slowest_host;
  std::optional<double> slowest_rank_ratio, slowest_host_ratio;
};

struct InspectorJobView {
  int64_t id = 0;
  std::string job_id;
  std::optional<double> started_at, ended_at;  // epoch seconds
  double ingested_at = 0;
  std::optional<int> nnodes, nranks;
  std::vector<InspectorGroupView> groups;
};

// A stored `fabtrack locate` verdict (store: locate_verdicts).
struct LocateView {
  int64_t id = 0;
  double located_at = 0;  // epoch seconds
  LocateRecord record;
};

// A job's newest `fabtrack ras watch` verdict (store: ras_job_verdicts).
struct RasJobView {
  std::string job_id;
  double judged_at = 0;  // epoch seconds: the newest snapshot judged
  std::optional<std::string> first_stuck_at;
  RasWatchVerdict verdict;
};

// Per run id, figures by key (analyzer/input_index.h Summary).
using RunFigures = std::unordered_map<int64_t, std::map<std::string, std::vector<double>>>;

struct AnalysisInput {
  ClusterInfo cluster;
  // Every run of the cluster known to the analysis, oldest first; the runs
  // judged are those with started_at >= judge_from, the rest is history.
  std::vector<RunView> runs;
  double judge_from = 0;
  // Per-size results of the runs above, grouped by run (any order).
  std::vector<ResultPoint> results;
  // Evidence loaded for the judged runs (and what history the detectors need).
  std::vector<ChannelUse> channels;
  std::vector<NetDeviceView> net_devices;
  std::vector<PortDeltaView> port_deltas;
  // Snapshot windows ending at or after judge_from (moved, unknown or
  // saturated counters only, as port_deltas), by port and window end.
  std::vector<SnapshotDeltaView> snapshot_deltas;
  // How many such windows end in the judged span, those where nothing moved
  // included (what was judged).
  int snapshot_windows = 0;
  std::vector<PortStateView> port_states;
  // Ports known to the inventory (any time), to tell that the cluster has
  // active RDMA ports at all.
  std::vector<PortStateView> port_inventory;
  // Failure and network lines of the judged runs' logs.
  std::vector<LogEventView> log_events;
  // Step-mode summaries of the runs above that have one.
  std::vector<StepView> steps;
  // Inspector jobs to judge: ended or ingested at or after judge_from.
  std::vector<InspectorJobView> inspector_jobs;
  // The cluster's newest locate verdicts (any age, newest first): the
  // report lists them, the locate_suspect detector judges those located at
  // or after judge_from.
  std::vector<LocateView> locate_verdicts;
  // The newest GPU/NIC wiring of every host `fabtrack topology ingest` has
  // seen (schema 013): the fleet diff judges it (topology_odd_node).
  std::map<std::string, NodeTopology> fleet_topologies;
  // The switch side of the judged runs' windows (`sweep --fabric-scan`,
  // schema 021), by run id: the run_fabric detector judges them and names an
  // uplink that errored during a run beside that run's other findings.
  std::map<int64_t, RunFabricWindow> run_fabric_windows;
  // Real jobs `fabtrack ras watch` judged at or after judge_from (schema
  // 022), newest first: the ras_job detector turns a stuck, dying or lagging
  // job into a problem.
  std::vector<RasJobView> ras_jobs;
  // Each node's CPUs over the judged runs' windows (the sweep's CPU bracket,
  // schema 023), by run id: cpu_bound names the busy nodes of a CPU-driven run.
  std::map<int64_t, std::vector<NodeCpuWindow>> run_cpu_windows;

  // Summarised history (schema 015): per run, the figures detectors keep of
  // it, by key ("busbw_regression/<settings hash>" -> numbers; NaN: none),
  // for the runs marked summarized. Empty when the full history was read.
  RunFigures summaries;
  // What the stored summaries are valid for: RunsDigest() of every run here,
  // and the newest run (written with the summaries by `fabtrack analyze`).
  std::string runs_digest;

  bool Judged(const RunView& run) const { return run.started_at >= judge_from; }
};

// The identity of a set of runs (ids and statuses): summaries computed over
// one set are valid for the same set only (a late older run, a deleted run
// or a run whose status changed invalidates them).
std::string RunsDigest(const std::vector<RunView>& runs);
// The same over the runs started at or before `through` (epoch seconds).
std::string RunsDigestThrough(const std::vector<RunView>& runs, double through);

}  // namespace fabtrack
