// Plain data that flows through fabtrack: what parsers produce, what the store
// writes and what the analyzer reads. No I/O, no library types beyond the STL.
// Absent values are std::nullopt (NULL in SQL), never zero. Measurement,
// SizeRow, RankDevice, NetDevice and ChannelObservation are part of a
// RunRecord: see core/run_record.h before adding a field to them.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace fabtrack {

// One half (out-of-place or in-place) of an nccl-tests result row.
struct Measurement {
  std::optional<double> time_us;
  std::optional<double> algbw_gbps;
  std::optional<double> busbw_gbps;
  // "#wrong" column (count of wrong elements); absent for N/A (-c 0).
  std::optional<int64_t> wrong;
  // Old nccl-tests printed a max-abs-error float column named "error" instead
  // of "#wrong" (e.g. 2e-07). Kept as printed; wrong stays absent then.
  std::optional<double> max_error;
  // Per-iteration statistics, when the producer has them (nccl-tests
  // per-iteration report, fabtrack-allreduce).
  std::optional<double> iter_min_us;
  std::optional<double> iter_max_us;
  std::optional<double> iter_p50_us;
  std::optional<double> iter_p99_us;
  std::optional<double> iter_cv_pct;

  bool operator==(const Measurement&) const = default;
};

// One line of an nccl-tests result table.
struct SizeRow {
  int64_t size_bytes = 0;
  std::optional<int64_t> count;
  std::optional<std::string> type;   // "float", "half", ...
  std::optional<std::string> redop;  // "sum", ... ; "none" placeholders -> nullopt
  std::optional<int> root;           // -1 placeholders -> -1 (printed), absent column -> nullopt
  std::optional<Measurement> oop;
  std::optional<Measurement> ip;
  int line = 0;  // 1-based line in the source file

  bool operator==(const SizeRow&) const = default;
};

// "#  Rank  0 Group  0 Pid 43 on host device  0 [0x0f] NVIDIA A100-SXM4-40GB"
struct RankDevice {
  int rank = 0;
  std::optional<int> group;
  std::optional<int64_t> pid;
  std::string host;
  std::optional<int> device;
  std::string bus_id;     // as printed inside the brackets: "0x0f", "0000:06:00"
  std::string gpu_model;  // rest of the line

  bool operator==(const RankDevice&) const = default;
};

// "# nThread 1 nGpus 1 minBytes 8 maxBytes ... graph: 0 unalign: 0"
struct TestParameters {
  std::optional<int> threads;
  std::optional<int> gpus_per_thread;
  std::optional<int64_t> min_bytes;
  std::optional<int64_t> max_bytes;
  std::optional<int64_t> step_bytes;
  std::optional<int64_t> step_factor;
  std::optional<int> warmup_iters;
  std::optional<int> iters;
  std::optional<int> agg_iters;
  std::optional<int> validation;
  std::optional<int> graph;
  std::optional<int> unalign;
};

// One nccl-tests result table (one collective run) with its header and trailer.
struct TestTable {
  // Canonical collective name: all_reduce, all_gather, reduce_scatter,
  // broadcast, reduce, alltoall, sendrecv, ...; nullopt when not known.
  std::optional<std::string> collective;
  std::optional<int> ranks;        // number of ranks (device lines, or JSON)
  std::vector<std::string> hosts;  // distinct hosts in rank order of appearance
  std::vector<RankDevice> devices;
  TestParameters parameters;
  std::vector<SizeRow> rows;
  std::optional<double> avg_busbw;  // "# Avg bus bandwidth : X"
  std::optional<bool> oob_ok;       // "# Out of bounds values : N OK|FAILED"
  std::optional<int64_t> oob_count;
  // The trailer was seen: the table was not cut short.
  bool complete = false;
  std::optional<std::string> nccl_tests_version;   // "2.18.3"
  std::optional<int> nccl_version_code;            // nccl-library=23003
  std::vector<std::string> command_args;           // JSON "args", when present
  std::map<std::string, std::string> environment;  // JSON "env" NCCL_* etc.
  std::optional<std::string> started_at;           // JSON "start_time" as printed
  int first_line = 0;
  int last_line = 0;
};

// "NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/RoCE/SHARP ; OOB ib0:..."
struct NetDevice {
  std::string host;  // empty when the log line had no host
  int index = 0;     // NCCL's NIC index ([0])
  std::string name;  // mlx5_0
  std::optional<int> port;
  std::string link;  // "IB" | "RoCE" | "" (unknown)
  bool sharp = false;

  bool operator==(const NetDevice&) const = default;
};

// One channel/ring connection line:
// "Channel 00/0 : 0[35000] -> 1[f5000] [send] via NET/IB/0/GDRDMA"
struct ChannelObservation {
  std::string host;
  std::optional<int64_t> pid;
  std::optional<int> cuda_device;  // the "[3]" after host:pid:tid
  int channel = 0;
  std::optional<int> conn_index;  // "/1" in "Channel 04/1"
  int from_rank = 0;
  int to_rank = 0;
  std::string from_bus_id;  // "35000" or rank-local index as printed
  std::string to_bus_id;
  std::optional<std::string> direction;  // "send" | "receive"
  std::string family;                    // "NET/IB", "P2P/IPC", "SHM", "NET/AWS Libfabric"
  std::string detail;                    // full transport text after "via "
  std::optional<int> nic_index;          // NET/IB/<n>
  bool gdrdma = false;
  bool is_ring_line = false;  // pre-2.7 "Ring 00 : ..."
  int line = 0;

  bool operator==(const ChannelObservation&) const = default;
};

struct LogMessage {
  std::string host;   // only from a real host:pid:tid prefix, else ""
  std::string level;  // "WARN" | "INFO" | "TEST" (an nccl-tests failure line)
  std::string text;
  int line = 0;

  bool operator==(const LogMessage&) const = default;
};

// "comm 0x... rank 3 nranks 16 cudaDev 3 ... - Init COMPLETE" and the other
// lines that name one rank of a communicator: that rank runs on `host`.
struct CommRank {
  int rank = 0;
  int nranks = 0;
  std::string host;  // empty when the line had no host prefix
  int line = 0;

  bool operator==(const CommRank&) const = default;
};

// What an NCCL_DEBUG=INFO stream tells about the communicator setup.
struct NcclLogInfo {
  std::optional<std::string> nccl_version;  // "2.19.3"
  std::optional<std::string> cuda_version;  // from "+cuda12.3"
  std::optional<std::string> network;       // "IB", "Socket", "IBext_v8", "AWS Libfabric"
  // Every distinct network that some rank reported ("Using network X", 2.27+
  // "Assigned NET plugin X to comm"), in order of first appearance. More than
  // one means a partial fallback (some ranks on Socket, say); `network` keeps
  // the first.
  std::vector<std::string> networks;
  std::vector<NetDevice> net_devices;
  std::vector<ChannelObservation> channels;
  std::vector<std::string> hosts;              // distinct hosts seen in log lines
  std::vector<std::string> gdr_disabled_hcas;  // "GPU Direct RDMA Disabled for HCA 0 'mlx5_0'"
  std::vector<std::string> socket_interfaces;  // "NET/Socket : Using [0]ens3:..."
  // 2.28's "NET/Socket : GPU Direct RDMA Disabled for HCA 0 'eth0'" (no GDR
  // verdict: the socket transport never has it, and IB jobs print it too).
  std::vector<std::string> socket_gdr_disabled;
  bool ib_no_device = false;  // "NET/IB : No device found."
  std::optional<int> nranks;  // "comm ... nranks 16 ..."
  // NCCL's own node count (2.19+ "comm 0x... rank 0 nRanks 16 nNodes 2
  // localRanks 8 localRank 0 MNNVL 0") of the largest communicator, and its
  // ranks per node.
  std::optional<int> nnodes;
  std::optional<int> local_ranks;
  // Ranks named with their host by init/destroy lines, for the node count
  // when nNodes is not printed (before 2.19).
  std::vector<CommRank> comm_ranks;
  // "NCCL_IB_HCA set by environment to mlx5_0": the settings NCCL echoes
  // (first value wins; numeric values lose NCCL's trailing period).
  std::map<std::string, std::string> env_settings;
  std::optional<std::string> cuda_driver_version;  // "cudaDriverVersion 12020" -> "12.2"
  // The NET plugin library NCCL loaded ("NCCL RDMA Plugin v8", "AWS
  // Libfabric"), or "internal" when it said no plugin was found.
  std::optional<std::string> net_plugin;
  std::vector<LogMessage> warnings;
  // INFO lines that say what NCCL could not use ("NET/IB : No device found.",
  // "Failed to open libibverbs.so", a NET plugin that did not load, "GPU
  // Direct RDMA Disabled for HCA ..."), and nccl-tests' "Test NCCL failure"
  // lines: the analyzer reads their meaning (analyzer/log_events.h).
  std::vector<LogMessage> notices;
  int info_lines = 0;  // how many NCCL log lines were recognised
  // What a long log (nights of logs in one file) repeats is kept up to a cap;
  // these count the lines left out (collector/parse/nccl_log_parser.h).
  int64_t dropped_warnings = 0;
  int64_t dropped_notices = 0;
  int64_t dropped_channels = 0;  // never one that shows a new transport or GDRDMA
  int64_t dropped_comm_ranks = 0;
};

struct ParseError {
  int line = 0;  // 1-based; 0 when the error concerns the whole file
  std::string message;
};

// The lines a run keeps of its log (run_log_events): WARN lines and
// notices, in the order of the log.
std::vector<LogMessage> KeptLogLines(const NcclLogInfo& log);

// Everything parsed from one input file. Produced by ParseFile (pure).
struct ParsedFile {
  std::string file;
  NcclLogInfo log;
  std::vector<TestTable> tests;
  std::vector<ParseError> errors;
  // Errors past the first ParseText keeps (a malformed line repeated through
  // a long file); counted, not listed.
  int64_t dropped_errors = 0;

  // Distinct transport families seen in channel lines, in order of first appearance.
  std::vector<std::string> Transports() const;
  // true: some NET channel used GDRDMA; false: NET channels without it, or
  // "GPU Direct RDMA Disabled"; nullopt: no evidence.
  std::optional<bool> Gdrdma() const;
  // A file is usable when it yielded a result table or NCCL log evidence.
  bool Usable() const;
};

}  // namespace fabtrack
