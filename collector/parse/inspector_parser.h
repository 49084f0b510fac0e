// Parser for the output of NCCL's Inspector profiler plugin, in both of its
// forms (JSON lines and Prometheus textfile), and a summary of parsed records.
//
// Facts relied on, read in github.com/NVIDIA/nccl (snapshot of master, June
// 2026, and tags v2.28.9-1, v2.29.7-1, v2.30.7-1). The plugin lived in
// ext-profiler/inspector/ up to 2.28 and in plugins/profiler/inspector/ since
// 2.29. Files read: README.md, inspector.cc (genDumpDir,
// inspectorStateDumpJSON, inspectorComputeOpBw, ncclFuncToString,
// inspectorTimingSourceToString), inspector_json.cc (2.30; the JSON writer,
// in inspector.cc before), json.cc (number and string printing),
// inspector_prom.cc (2.29 and 2.30), inspector_plugin.cc, inspector.h.
//
// Switches (environment): NCCL_PROFILER_PLUGIN=<path>/libnccl-profiler-
// inspector.so and NCCL_INSPECTOR_ENABLE=1 turn it on;
// NCCL_INSPECTOR_DUMP_DIR (default nccl-inspector-<SLURM_JOBID> or
// nccl-inspector-unknown-jobid); NCCL_INSPECTOR_DUMP_THREAD_INTERVAL_
// MICROSECONDS (2.30 default -1: dump only at communicator teardown);
// NCCL_INSPECTOR_DUMP_VERBOSE=1 adds event traces; NCCL_INSPECTOR_PROM_DUMP=1
// writes the Prometheus form instead of JSON; NCCL_INSPECTOR_DUMP_MIN_SIZE_
// BYTES (default 8192: smaller operations are not recorded);
// NCCL_INSPECTOR_ENABLE_P2P (2.30, default 1); NCCL_INSPECTOR_REQUIRE_
// KERNEL_TIMING (2.30, default 1: only kernel_gpu timings are kept).
//
// JSON form: one file per process, <dump dir>/<hostname>-pid<pid>.log, that
// grows for the life of the process; one compact JSON object per completed
// operation, each followed by "\n" (JSON lines, though named .log; NVIDIA's
// exporter also reads .jsonl). A process with several communicators or ranks
// writes them all to its one file. Each object:
//   header:   id (communicator hash as "0x%lx", a string), comm_name (2.30+;
//             "unknown" when the application named none), rank, n_ranks,
//             nnodes (integers);
//   metadata: inspector_output_format_version ("v4.0" in 2.28 to 2.30),
//             git_rev, rec_mechanism, dump_timestamp_us (µs since the epoch,
//             when the record was written, not when the operation ran),
//             hostname, pid;
//   coll_perf: coll (ncclFuncToString: AllReduce, AllGather, ReduceScatter,
//             Broadcast, Reduce, SendRecv, Send, Recv, All2All, AllGatherV),
//             coll_sn (per-communicator sequence number),
//             coll_msg_size_bytes (count x type size: for AllGather the send
//             size, for ReduceScatter the receive size, i.e. per-rank),
//             coll_exec_time_us (integer µs; the longest kernel channel),
//             coll_timing_source (kernel_gpu, kernel_cpu, collective_cpu),
//             coll_algobw_gbs and coll_busbw_gbs (GB/s with GB = 1e9 bytes:
//             algbw = traffic / 1e9 / seconds where traffic is the size, or
//             size x n_ranks for AllGather/ReduceScatter; busbw = algbw x
//             2(n-1)/n for AllReduce, (n-1)/n for AllGather/ReduceScatter,
//             1 otherwise; printed "%lf", NaN as the string "nan", an
//             infinity would come out as a bare, non-JSON inf);
//             verbose only: event_trace_sn and event_trace_ts (coll_start_ts,
//             coll_stop_ts in µs since the epoch, kernel_events per channel);
//   or p2p_perf (2.30+): p2p (Send/Recv), p2p_sn, p2p_peer,
//             p2p_msg_size_bytes, p2p_exec_time_us, p2p_timing_source,
//             p2p_algobw_gbs, p2p_busbw_gbs.
//   No datatype, algorithm or protocol is written in any version.
//
// Prometheus form: one file per GPU, <dump dir>/nccl_inspector_metrics_<GPU
// UUID>.prom (UUID as 8-4-4-4-12 lower-case hex), rewritten every dump
// interval (at least 30 s); no HELP/TYPE lines; values printed "%.6g";
// label values are not escaped by the writer.
//   2.29: per operation, nccl_algorithm_bandwidth_gbs, nccl_bus_bandwidth_gbs
//     and nccl_collective_exec_time_microseconds with labels comm_id,
//     hostname, rank, slurm_job, slurm_job_id, nranks, n_nodes,
//     gpu_device_id ("GPU<cuda device>"), collective, coll_sn, timestamp
//     (UTC "YYYY-MM-DDTHH:MM:SSZ" of the dump) and message_size ("512B" or
//     "%.2f" KB/MB/GB/TB, 1024-based). Lacks: exact size, pid, algorithm,
//     protocol, timing source.
//   2.30+: per (communicator name, collective, size bucket, algorithm_protocol)
//     aggregates of the interval, nccl_bus_bandwidth_gbs (geometric mean) and
//     nccl_collective_exec_time_microseconds (arithmetic mean), plus
//     nccl_p2p_bus_bandwidth_gbs / nccl_p2p_exec_time_microseconds with a
//     p2p_operation label; labels version ("v5.1"), slurm_job_id, node, gpu,
//     comm_name, n_nodes, nranks, collective, message_size (bucket
//     "<lo>-<lo+1><unit>", 1024-based, e.g. "32-33MB"), algo_proto
//     ("RING_SIMPLE", "NVLS_TREE_LL128", "unknown_unknown"). Lacks: rank,
//     communicator hash, pid, per-operation values, operation count, exact
//     size, algbw, sequence number and any timestamp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack {

enum class InspectorFormat { kJsonLines, kPrometheus };

// One operation (JSON, Prometheus 2.29) or one interval aggregate
// (Prometheus 2.30+) of one rank. Absent is not zero: fields a form does not
// carry stay empty.
struct InspectorRecord {
  InspectorFormat format = InspectorFormat::kJsonLines;
  int line = 0;  // line in its file (of the first sample, for Prometheus)

  std::optional<std::string> job_id;          // slurm_job_id label
  std::optional<std::string> comm_id;         // "0x9a3f1c72e05b48", as written
  std::optional<uint64_t> comm_hash;          // comm_id as a number
  std::optional<std::string> comm_name;       // "unknown" reads as absent
  std::optional<int> rank;                    // in the communicator
  std::optional<int> nranks;                  // of the communicator
  std::optional<int> nnodes;                  // of the communicator
  std::optional<std::string> host;            // hostname / node
  std::optional<int64_t> pid;                 // JSON only
  std::optional<std::string> gpu;             // "GPU3": CUDA device index (Prometheus)
  std::optional<std::string> gpu_uuid;        // from the .prom file name
  std::optional<std::string> format_version;  // "v4.0" (JSON), "v5.1" (Prometheus 2.30)

  // fabtrack's name ("all_reduce", "reduce_scatter", "send"); a name the
  // plugin may add later is kept as written.
  std::string collective;
  bool p2p = false;
  std::optional<int> peer;     // p2p only
  std::optional<int64_t> seq;  // coll_sn / p2p_sn

  // Exact for JSON. From Prometheus, the size label read back: 2.29 rounds it
  // to two decimals of its unit, 2.30 gives a bucket [message_bytes, upper).
  int64_t message_bytes = 0;
  bool message_bytes_exact = true;
  std::optional<int64_t> message_bytes_upper;

  std::optional<std::string> dtype;      // no known version writes it
  std::optional<std::string> algorithm;  // "RING", "NVLS_TREE" (Prometheus 2.30+)
  std::optional<std::string> protocol;   // "LL", "LL128", "SIMPLE"

  // One operation, or the mean of an interval's operations when aggregated.
  double exec_time_us = 0;
  std::optional<double> algbw_gbps;          // GB/s, 1 GB = 1e9 bytes
  std::optional<double> busbw_gbps;          // geometric mean when aggregated
  bool aggregated = false;                   // Prometheus 2.30+ interval aggregate
  std::optional<std::string> timing_source;  // kernel_gpu, kernel_cpu, collective_cpu

  std::optional<int64_t> timestamp_us;  // when written (JSON dump time, 2.29 label)
  std::optional<int64_t> start_us;      // verbose JSON: when the operation started
};

struct InspectorError {
  std::string file;
  int line = 0;  // 1-based; 0 when the error concerns the whole file
  std::string message;

  // "file.log:17: missing field 'coll'" ("file.log: ..." for line 0).
  std::string ToString() const;
};

struct InspectorParseResult {
  std::vector<InspectorRecord> records;
  std::vector<InspectorError> errors;
  // The text ends inside a line (the writer was still at it, or died): that
  // line is reported and dropped, the records before it are kept.
  bool truncated = false;
};

// Longer lines are reported and skipped unread. A record is a few hundred
// bytes, a verbose one a few tens of kilobytes (one entry per channel).
inline constexpr size_t kInspectorMaxLineBytes = 1 << 20;
// Errors listed per file; the rest are counted in one last error.
inline constexpr size_t kInspectorMaxErrors = 100;

// Parses the JSON lines form. `file_name` is used only in error messages.
// Pure; never throws. A line that is not a record (garbage, a missing
// required field: the collective, its size or its time) is reported with its
// line number and skipped; an optional field of the wrong type or out of
// range is reported and left absent.
InspectorParseResult ParseInspectorJsonLines(std::string_view text, std::string_view file_name);

// Parses the Prometheus textfile form (both label sets). Samples with the
// same labels make one record; other metrics are ignored. The GPU UUID is
// taken from a file name of the plugin's form. Pure; never throws.
InspectorParseResult ParseInspectorPrometheus(std::string_view text, std::string_view file_name);

// Chooses by file name: *.prom is Prometheus, anything else JSON lines.
InspectorParseResult ParseInspectorFile(std::string_view text, std::string_view file_name);

// ---------------------------------------------------------------------------
// Summary

// One rank (or host) compared with the typical rank of its group.
struct InspectorRankStat {
  int rank = 0;
  std::string host;  // host of the rank's first record
  size_t count = 0;
  double mean_us = 0;
  double ratio = 0;  // mean_us / the group's median rank mean
};

struct InspectorHostStat {
  std::string host;
  size_t count = 0;
  double mean_us = 0;               // over all the host's records
  double ratio = 0;                 // mean_us / median rank mean (median host mean without ranks)
  std::optional<int> slowest_rank;  // the host's rank with the highest mean
};

// Records of one (communicator, collective, size).
struct InspectorGroupSummary {
  std::string communicator;  // comm_id, else comm_name, else ""
  std::string collective;
  int64_t message_bytes = 0;
  std::optional<int> nranks;
  size_t count = 0;  // records (an aggregated record counts once)
  double median_us = 0;
  double p90_us = 0;
  double max_us = 0;
  std::optional<double> median_busbw_gbps;
  std::optional<double> median_rank_mean_us;     // absent when no record has a rank
  std::vector<InspectorRankStat> slowest_ranks;  // highest ratio first
  std::vector<InspectorHostStat> slowest_hosts;  // highest ratio first
};

struct InspectorSummaryOptions {
  size_t top_n = 3;  // ranks and hosts listed per group
};

// Groups sorted by communicator, collective, size. Quantiles interpolate
// linearly between the closest ranks (the median of an even count is the
// mean of the middle two). Pure.
std::vector<InspectorGroupSummary> SummarizeInspector(const std::vector<InspectorRecord>& records,
                                                      const InspectorSummaryOptions& options = {});

}  // namespace fabtrack
