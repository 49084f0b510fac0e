// Plans a sweep of a benchmark over node counts: which node counts, and the
// exact launcher command line for each. The benchmark is fabtrack-allreduce
// (default) or nccl-tests' programs, one run per collective and node count.
// Pure; `fabtrack sweep` runs it.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace fabtrack::sweep {

enum class Launcher {
  kLocal,     // mpirun on this host: "nodes" are rank counts (laptop, CI)
  kHostfile,  // mpirun with the first k hosts of a hostfile
  kSlurm,     // srun -N k inside an allocation
  kCustom,    // a given mpirun-like prefix (e.g. scripts/netns-fabric.sh mpirun --)
  kDirect,    // no launcher: the program itself, on this one node (one node count, 1);
              // a GPU box without MPI, nccl-tests -g 8 on one server
};

enum class Benchmark {
  kFabtrackAllreduce,  // fabtrack-allreduce, writes its own result file
  kNcclTests,          // nccl-tests' <collective>_perf: its printed output is parsed
};

// One nccl-tests program of the sweep: "all_gather" at DIR/all_gather_perf.
struct NcclTestsProgram {
  std::string collective;
  std::string path;
};

struct SweepSpec {
  Launcher launcher = Launcher::kLocal;
  std::vector<int> node_counts;  // ascending, distinct, > 0
  int ranks_per_node = 1;
  std::string mpirun = "mpirun";           // kLocal / kHostfile
  std::vector<std::string> custom_prefix;  // kCustom: argv before "-np N"
  std::vector<std::string> hosts;          // kHostfile: hosts in file order
  std::string hostfile_dir;                // where per-k hostfiles are written
  std::string allreduce;                   // fabtrack-allreduce path
  std::vector<std::string> harness_args;   // passed through (-b -e -f -n -w ...)
  std::string sweep_id;
  std::string output_dir;         // result files land here (shared or local)
  std::vector<std::string> tags;  // k=v
  bool as_root = false;           // Open MPI needs --allow-run-as-root
  Benchmark benchmark = Benchmark::kFabtrackAllreduce;
  std::vector<NcclTestsProgram> nccl_tests;  // kNcclTests: the programs, in run order
  bool nccl_tests_json = false;              // they take -J FILE (nccl-tests 2.17+)
  // Environment variables every rank gets (`sweep --ab`'s side B), passed the
  // way the launcher forwards them: mpirun -x NAME=VALUE (Open MPI), srun
  // --export=ALL,NAME=VALUE, `env NAME=VALUE` without a launcher.
  std::vector<std::pair<std::string, std::string>> rank_env;
};

struct PlannedRun {
  int nodes = 0;
  int ranks = 0;
  std::vector<std::string> argv;
  std::optional<std::string> hostfile_path;  // to write before running
  std::vector<std::string> hostfile_lines;
  std::optional<std::string> output_file;      // fabtrack-allreduce's result file
  std::optional<std::string> collective;       // kNcclTests
  std::optional<std::string> transcript_file;  // kNcclTests: everything it printed
  std::optional<std::string> json_file;        // kNcclTests with -J
  int expected_ranks = 0;  // ranks the benchmark should report (nccl-tests: x -g x -t)
};

// nccl-tests' ranks per process: -g GPUs per thread times -t threads, from
// the flags as given (-g 2, -g2, --ngpus 2, --ngpus=2; the last one wins).
// nullopt when a value is malformed.
std::optional<int> NcclTestsRanksPerProcess(const std::vector<std::string>& args);

// `sweep --ab SETTING`: one environment variable of the ranks (NAME=VALUE:
// NCCL_*, OMPI_MCA_*, UCX_*, ...) or an NCCL library directory (nccl-lib=DIR,
// put first on the ranks' LD_LIBRARY_PATH so that they load that NCCL).
struct AbSetting {
  std::string name;  // the variable, or "nccl-lib"
  std::string value;
  bool nccl_lib = false;
};
// nullopt with the reason in `why` when it is neither form.
std::optional<AbSetting> ParseAbSetting(const std::string& text, std::string* why);
// The variables side B's ranks get: {NAME, VALUE}, or for nccl-lib
// {LD_LIBRARY_PATH, DIR[:current_ld_library_path]}.
std::vector<std::pair<std::string, std::string>> AbRankEnvironment(
    const AbSetting& setting, const std::string& current_ld_library_path);
// The sides in the order they run: round r starts with A when r is odd, so
// that neither side always runs first ("AB", "ABBA", "ABBAAB").
std::string AbOrder(int rounds);

// "1,2,4" -> {1,2,4}; "1-4" -> {1,2,3,4}; "pow2:16" -> {1,2,4,8,16}.
// nullopt on malformed input.
std::optional<std::vector<int>> ParseNodeCounts(const std::string& text);

// Host names from an Open MPI / MPICH hostfile ("host slots=8", "host:8",
// comments, blank lines). Pure over the file's text.
std::vector<std::string> ParseHostfile(const std::string& text);

// Empty string when the spec can run, else what is wrong.
std::string ValidateSpec(const SweepSpec& spec);

// Node count by node count; for nccl-tests, each count runs every program.
std::vector<PlannedRun> PlanSweep(const SweepSpec& spec);

// The command that reads the port counters of every node of `run` once: the
// same launcher with one process per node running
// `<fabtrack> counters snapshot --format json --sysfs <sysfs> --output <out>`,
// where `out` holds "{host}" so that every node writes its own file (a
// launcher's merged stdout interleaves long lines), and `--hw-counters
// <hw_counters>` unless that is "all" (the default: the command stays what
// older fabtracks on the nodes accept). kLocal runs it once, here (all
// "nodes" are this host).
std::vector<std::string> PlanPortSampling(const SweepSpec& spec, const PlannedRun& run,
                                          const std::string& fabtrack, const std::string& sysfs,
                                          const std::string& out,
                                          const std::string& hw_counters = "all");

// The command that reads the CPUs of every node of `run` once (the sweep's
// CPU bracket): the same launcher, one process per node, running
// `<fabtrack> counters cpu --output <out>` ("{host}" in `out`).
std::vector<std::string> PlanCpuSampling(const SweepSpec& spec, const PlannedRun& run,
                                         const std::string& fabtrack, const std::string& out);

// `fabtrack locate`'s command for one round of pair probes: one rank on
// each of `hosts` (exactly those), running `program` with `args`, through
// the spec's launcher: srun -N n --nodelist (Slurm), mpirun -np n --host
// (a host list), or the custom prefix with -np n --host. kLocal cannot
// place ranks on distinct nodes: empty.
std::vector<std::string> PlanProbeRound(const SweepSpec& spec,
                                        const std::vector<std::string>& hosts,
                                        const std::string& program,
                                        const std::vector<std::string>& args);

}  // namespace fabtrack::sweep
