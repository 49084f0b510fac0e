// NCCL's RAS status report (NCCL >= 2.24: `STATUS` / `VERBOSE STATUS` on
// localhost:28028; JSON with `SET FORMAT json` from 2.28.7) as plain structs,
// its two pure parsers, and the verdict drawn from either: which
// communicators, which ranks are dead, missing or behind, by node IP, GPU and
// pid. The socket client is ras_client.h.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fabtrack::ras {

// One rank as RAS names it: "Rank 17 -- GPU 1 managed by process 4242 on node
// 10.1.0.7". RAS names processes by IP address, never by host name.
struct RankRef {
  int rank = -1;
  std::string gpu;             // "1", or "1 (NVML 3)"; empty when unknown
  std::optional<int64_t> pid;  // absent: "[process information not found]"
  std::string node;            // IP address as RAS prints it
  std::string state;           // set by Judge: what this rank is ("behind: ...", "considered dead")
};

// "Process 4242 on node 10.1.0.7 managing GPU 5" (a job process, not a rank).
struct ProcessRef {
  int64_t pid = 0;
  std::string node;
  std::string gpus;  // "5", "0,1" or "5 (NVML 6)"
};

// One value shared by some of a communicator's ranks: "26 ranks have launched
// up to operation 6650", "4 ranks have status RUNNING", "2 ranks reported
// Remote process error". A single rank's "Rank 3 has status INIT -- ..." is a
// group of one. `ranks` lists the members RAS printed (only outliers).
struct RankGroup {
  std::string aspect;  // what differs: "collective operation counts", "AllReduce operation counts",
                       // "status"...
  int count = 0;       // ranks in the group
  std::string
      value;  // "launched up to operation 6650", "status RUNNING", "not launched any operations"
  std::optional<int64_t>
      operation;  // the operation count, where the value is one (0: none launched)
  std::vector<RankRef> ranks;
};

// A block of the "Errors" or "Warnings" section: "DEAD", "INCOMPLETE",
// "TIMEOUT" (job-wide), or "#0-0 (27a079b828ff1a75) MISMATCH" (one
// communicator: INCOMPLETE, ERROR or MISMATCH).
struct Issue {
  bool error = false;        // in "Errors" (true) or "Warnings"
  std::string kind;          // DEAD, INCOMPLETE, TIMEOUT, MISMATCH, ERROR, or what RAS printed
  std::string communicator;  // "#0-0"; empty for job-wide blocks
  std::string comm_hash;     // "27a079b828ff1a75"
  std::optional<int> count;  // processes missing or dead, ranks missing, timeouts
  std::vector<std::string> details;  // the block's other lines, trimmed
  std::vector<ProcessRef> processes;
  std::vector<RankRef> ranks;     // missing ranks, with what RAS knows of them
  std::vector<RankGroup> groups;  // MISMATCH and ERROR breakdowns
};

// One row of the "Communicators" table: communicators of one shape and state.
struct CommGroupRow {
  int group = 0;
  int comms = 0;
  int nodes_per_comm = 0;
  std::string ranks_per_node;  // "8" or "7-8"
  int ranks_per_comm = 0;
  int ranks_in_group = 0;
  std::string status;  // NOCOMM, INIT, RUNNING, FINALIZE, ABORT
  std::string errors;  // OK, MISMATCH, INCOMPLETE, "INCOMPLETE,ERROR"...
};

// "Node 10.1.0.9 running processes 811,812" under "The outlier node(s):":
// a node whose process count differs from most nodes' (an uneven job prints
// per-node rows, then totals, then these).
struct OutlierNode {
  std::string node;
  // As RAS printed them ("811,812"). Every release 2.24.3-2.30.7 takes them
  // from the start of its sorted peer list (auxRasPeers[j], not [peerIdx + j],
  // in rasClientRunInit), so they are this node's only for the first outlier
  // node of the group with the fewest processes.
  std::string pids;
};

struct JobSummary {
  std::optional<int> nodes, processes_per_node, gpus_per_process, processes, gpus;
  std::vector<OutlierNode> outlier_nodes;
};

// The JSON report's ranks (2.28.7+).
struct JsonRank {
  int rank = -1;
  std::string host;
  int64_t pid = 0;
  int cuda_dev = -1;
  int nvml_dev = -1;
  int init_state = 0;  // 0 ncclSuccess, 7 ncclInProgress, else an error
  int async_error = 0;
  bool finalize_called = false, destroy_flag = false, abort_flag = false;
  std::vector<std::pair<std::string, int64_t>> collective_counts;  // in the report's order
};
struct JsonMissingRank {
  int rank = -1;
  std::string host;
  int64_t pid = 0;
  int cuda_dev = -1;
  int nvml_dev = -1;
  bool unresponsive = false;
  bool considered_dead = false;
};
struct JsonCommunicator {
  std::string hash;  // "0xae94423cfbb2ef4a"
  int size = 0;
  std::vector<JsonRank> ranks;
  std::vector<JsonMissingRank> missing_ranks;
};

struct Report {
  std::string format;  // "text" or "json"
  std::string nccl_version;
  // Text.
  JobSummary job;
  std::optional<double> collection_s;  // "Communicators... (2.05s)"
  std::vector<CommGroupRow> groups;
  std::vector<Issue> issues;
  // Processes the RAS network itself could not reach while gathering
  // ("Warning: missing data from 1 process" above the table).
  std::vector<ProcessRef> network_missing;
  // JSON.
  std::vector<JsonCommunicator> communicators;
  std::optional<int> timeouts;
  // The whole report was read (false: it ends early; `problems` says where).
  bool complete = false;
  // The JSON had NCCL 2.28.7-2.28.9's lost comma in missing_ranks and was
  // read after putting it back.
  bool json_repaired = false;
  std::vector<std::string> problems;  // "line 12: ..." notes on what could not be read
  // ParseRasReport of a text holding several reports: how many came before
  // the one read (the last), and the line it starts on.
  int earlier_reports = 0;
  size_t first_line = 1;
};

// The text report of STATUS / VERBOSE STATUS. Pure; never throws. Lines it
// does not know are kept as details of their block or skipped. The report is
// whole (complete) once its "Warnings" header is read: every release
// (2.24.3-2.30.7) prints "Errors" and "Warnings" unconditionally, the latter
// in the reply's last piece, so a reply cut after the table or the errors
// (a RAS thread that crashed mid-report, NVIDIA/nccl#1762, #2346) is said
// so, not judged as if nothing were wrong.
Report ParseRasText(std::string_view text);

// The JSON report of SET FORMAT json. Pure; never throws. Invalid JSON
// (other than the one lost comma it repairs) yields complete = false and a
// problem naming the line; a reply cut short is said so.
Report ParseRasJson(std::string_view text);

// Whether `text` is a JSON report: its first non-blank character is '{', or
// it is after the protocol's own answers a saved `nc` session holds ("OK" to
// SET FORMAT, "SERVER PROTOCOL 2").
bool LooksLikeJson(std::string_view text);

// A saved report (`ncclras > f`, `ncclras -f json > f`, or an `nc` session),
// text or JSON as LooksLikeJson says, parsed by the matching parser; of
// several text reports appended to one file (`ncclras >> f`), the last. What
// comes before the report read is read as blank lines, so line numbers in
// `problems` stay those of the file.
Report ParseRasReport(std::string_view text);

enum class Health { kHealthy = 0, kWarning = 1, kCritical = 2 };

// One thing wrong, with the ranks or processes it names.
struct Finding {
  Health severity = Health::kWarning;
  std::string kind;  // dead, incomplete, missing, unresponsive, error, mismatch, behind, timeout,
                     // unreadable
  std::string communicator;  // "#0-0 (27a0...)" or a JSON hash; empty: job-wide
  std::string message;
  std::vector<RankRef> ranks;
  std::vector<ProcessRef> processes;
};

struct Verdict {
  Health health = Health::kHealthy;
  int communicators = 0;  // known to the report
  std::vector<Finding> findings;
};

// Judges a parsed report: dead processes, missing ranks (INCOMPLETE) and
// rank errors are critical; a MISMATCH (ranks at different operation counts
// or states), ranks behind the others by collective count (JSON), and
// timeouts are warnings (a mismatch that does not move between two queries
// is a stuck communicator: that takes two snapshots, `ras watch`'s job). A
// report that was not read whole is critical ("unreadable").
Verdict Judge(const Report& report);

// The ranks of `group`, a MISMATCH group of operation counts that RAS counted
// but did not name (the text report lists a group's ranks only when it is
// small), where they are certain: the group is the only unnamed one of its
// operation and the communicator's other ranks (its size from the table, less
// the ranks named in the other groups and those its INCOMPLETE block names)
// number exactly the group. Empty otherwise.
std::vector<int> UnnamedGroupRanks(const Report& report, const Issue& issue,
                                   const RankGroup& group);

const char* HealthLabel(Health h);  // "healthy", "warning", "critical"

}  // namespace fabtrack::ras
