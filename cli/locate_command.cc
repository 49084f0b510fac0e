// fabtrack locate: name the slow node or uplink in few rounds of pair probes.
//   fabtrack locate [--hosts a,b,c | --hostfile F | (Slurm allocation)]
//                   [--topology FILE|SCAN.json] [--mpirun "CMD ..."] [--format text|json]
//                   [--max-rounds N] [--budget SECONDS] [--probe PATH]
//                   [--cluster NAME [--db ... | --data-dir DIR] [--sweep-id ID]
//                    [--run-id N ...] [--flagged-since TIME [--flagged-by KINDS]]]
//                   [-- <fabtrack-pairprobe flags>]
// With --cluster the verdict is stored (spooled when the database is away),
// linked to the given runs, the sweep's runs and the flagged runs;
// --flagged-since locates only when the analysis flagged a run since TIME.
// Exit: 0 no suspect (settled), 1 a suspect (warning) or no suspect but not
// settled, 2 a settled strong suspect (critical), 3 could not run; 2 also for
// bad flags, as every command.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "app/locate_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/fabric/run_window.h"
#include "collector/parse/locate_topology_parser.h"
#include "collector/sweep/sweep_plan.h"
#include "core/clock.h"
#include "core/fabric_scan_json.h"
#include "core/locate_json.h"
#include "core/subprocess.h"
#include "core/text.h"

namespace fabtrack::cli {
namespace {
namespace fs = std::filesystem;

constexpr int kCouldNotRun = 3;

struct LocateOptions {
  std::optional<std::string> hosts, hostfile, topology, mpirun, probe, work_dir;
  std::string format = "text";
  int max_rounds = 0;
  double budget_s = 0;
  // Storing the verdict.
  std::optional<std::string> cluster, sweep_id, flagged_since;
  std::vector<int64_t> run_ids;
  std::optional<std::string> flagged_by;
  DatabaseOptions database;
};

std::vector<std::string> Split(const std::string& text, const std::string& separators) {
  std::vector<std::string> out;
  std::string word;
  for (char c : text + separators.substr(0, 1)) {
    if (separators.find(c) != std::string::npos) {
      if (!word.empty()) out.push_back(word);
      word.clear();
    } else {
      word += c;
    }
  }
  return out;
}

// fabtrack-pairprobe beside this binary (installed) or in the build tree.
std::string FindProbe() {
  std::error_code ec;
  fs::path self = fs::read_symlink("/proc/self/exe", ec);
  if (!ec) {
    for (fs::path c :
         {self.parent_path() / "fabtrack-pairprobe",
          self.parent_path().parent_path() / "collector" / "harness" / "fabtrack-pairprobe"}) {
      if (access(c.c_str(), X_OK) == 0) return c.string();
    }
  }
  return "fabtrack-pairprobe";
}

// The Slurm allocation's nodes: `scontrol show hostnames $SLURM_JOB_NODELIST`.
std::vector<std::string> SlurmHosts() {
  const char* list = std::getenv("SLURM_JOB_NODELIST");
  if (!list || !*list) return {};
  std::string scontrol = "scontrol";
  for (const std::string& dir : Split(std::getenv("PATH") ? std::getenv("PATH") : "", ":")) {
    if (access((dir + "/scontrol").c_str(), X_OK) == 0) {
      scontrol = dir + "/scontrol";
      break;
    }
  }
  ProcessResult r = RunProcess({scontrol, "show", "hostnames", list});
  if (r.exit_code != 0) {
    std::cerr << "fabtrack locate: scontrol show hostnames failed: " << r.output;
    return {};
  }
  return Split(r.output, "\n");
}

// Beside an uplink suspect, what its leaf's uplinks counted in the scan
// given as --topology (a `fabric scan --format json` document).
void PrintUplinkCounters(const LocateSuspect& s, const FabricScan* scan) {
  if (!scan || s.kind != "uplink") return;
  const std::string leaf = s.name.substr(0, s.name.rfind('-'));
  const std::vector<std::string> lines = fabric::UplinkCounterLines(*scan, leaf);
  if (lines.empty()) return;
  std::cout << "  uplink counters (fabric scan " << scan->scanned_at << "):\n";
  for (const std::string& line : lines) std::cout << "    " << line << "\n";
}

void PrintText(const app::LocateReport& report, const FabricScan* scan) {
  const LocateVerdict& v = report.verdict;
  std::cout << "locate: " << report.topology.nodes.size() << " nodes";
  if (report.topology.HasLeaves()) {
    std::set<std::string> leaves;
    for (const auto& [node, leaf] : report.topology.leaf_of) leaves.insert(leaf);
    std::cout << " on " << leaves.size() << " leaves";
  }
  std::cout << ", " << v.rounds << " round(s), " << report.probes.size() << " one-way probes, "
            << report.seconds << " s\n";
  for (const std::string& note : v.notes) std::cout << "cleared: " << note << "\n";
  if (v.suspects.empty()) {
    std::cout << "no fault found (healthy spread: bandwidth " << 100 * v.busbw_spread
              << "%, small-message latency " << 100 * v.latency_spread << "%)";
    if (!v.settled) std::cout << "; not settled: too little measured to clear every node";
    std::cout << "; confidence " << v.confidence << "\n";
    return;
  }
  if (!v.settled) std::cout << "not settled: the measurements fit more than one explanation\n";
  std::cout << "confidence " << v.confidence << "\n";
  int i = 0;
  for (const LocateSuspect& s : v.suspects) {
    std::cout << "suspect " << ++i << ": " << s.kind << " " << s.name << " (score " << s.score
              << ")\n";
    for (const std::string& e : s.evidence) std::cout << "  " << e << "\n";
    PrintUplinkCounters(s, scan);
  }
}

void RunLocate(const LocateOptions& o) {
  if ((o.sweep_id || !o.run_ids.empty() || o.flagged_since) && !o.cluster) {
    std::cerr << "fabtrack locate: --sweep-id, --run-id and --flagged-since need --cluster\n";
    throw CommandExit{kExitUsage};
  }
  std::vector<int64_t> run_ids = o.run_ids;
  if (o.flagged_since) {
    const std::optional<std::string>& since = o.flagged_since;  // checked while parsing
    std::vector<std::string> kinds =
        o.flagged_by ? Split(*o.flagged_by, ",") : app::DefaultLocateTriggers();
    std::vector<int64_t> flagged =
        app::FlaggedRuns(o.database, *o.cluster, *since, kinds, std::cerr);
    if (flagged.empty()) {
      std::cout << "locate: no run of " << *o.cluster << " since " << *since << " is flagged by "
                << Join(kinds, ",") << "; not run\n";
      return;
    }
    std::cout << "locate: " << flagged.size() << " run(s) of " << *o.cluster << " flagged since "
              << *since << "\n";
    run_ids.insert(run_ids.end(), flagged.begin(), flagged.end());
  }
  app::LocateRequest request;
  request.launch.as_root = geteuid() == 0;
  if (o.hosts) {
    request.hosts = Split(*o.hosts, ",");
  } else if (o.hostfile) {
    std::ifstream in(*o.hostfile);
    if (!in) {
      std::cerr << "fabtrack locate: cannot read --hostfile " << *o.hostfile << "\n";
      throw CommandExit{kExitUsage};
    }
    request.hosts = sweep::ParseHostfile(std::string((std::istreambuf_iterator<char>(in)), {}));
  } else {
    request.hosts = SlurmHosts();
    if (!o.mpirun) request.launch.launcher = sweep::Launcher::kSlurm;
  }
  if (request.hosts.empty()) {
    std::cerr << "fabtrack locate: no hosts: give --hosts, --hostfile, or run inside a Slurm "
                 "allocation\n";
    throw CommandExit{kExitUsage};
  }
  if (std::set<std::string>(request.hosts.begin(), request.hosts.end()).size() !=
      request.hosts.size()) {
    std::cerr << "fabtrack locate: a host is listed twice\n";
    throw CommandExit{kExitUsage};
  }
  if (request.hosts.size() < 2) {
    std::cerr << "fabtrack locate: need at least 2 hosts\n";
    throw CommandExit{kExitUsage};
  }
  if (o.mpirun) {
    request.launch.launcher = sweep::Launcher::kCustom;
    request.launch.custom_prefix = Split(*o.mpirun, " \t");
  } else if (request.launch.launcher != sweep::Launcher::kSlurm) {
    request.launch.launcher = sweep::Launcher::kHostfile;
  }
  std::optional<FabricScan> scan_topology;
  if (o.topology) {
    std::ifstream in(*o.topology);
    if (!in) {
      std::cerr << "fabtrack locate: cannot read --topology " << *o.topology << "\n";
      throw CommandExit{kExitUsage};
    }
    const std::string text((std::istreambuf_iterator<char>(in)), {});
    ParsedTopology parsed = ParseTopology(text, *o.topology);
    // A scan as topology: its counters go beside an uplink suspect.
    if (parsed.errors.empty() && text.find_first_not_of(" \t\r\n") != std::string::npos &&
        text[text.find_first_not_of(" \t\r\n")] == '{') {
      std::string why;
      scan_topology = FabricScanFromJson(nlohmann::json::parse(text, nullptr, false), &why);
    }
    for (const std::string& e : parsed.errors) std::cerr << e << "\n";
    if (!parsed.errors.empty()) throw CommandExit{kExitUsage};
    request.fabric = std::move(parsed.topology);
  }
  if (request.launch.as_root && request.launch.launcher != sweep::Launcher::kSlurm) {
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 0);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 0);
  }
  request.probe_program = o.probe.value_or(FindProbe());
  request.probe_args = PassthroughArgs();
  request.max_rounds = o.max_rounds;
  request.budget_s = o.budget_s;
  // Result files: our own temp folder unless told where (it must be shared
  // with the node of the first rank of each round).
  std::error_code ec;
  request.work_dir = o.work_dir.value_or(
      (fs::temp_directory_path() / ("fabtrack-locate-" + std::to_string(getpid()))).string());
  fs::create_directories(request.work_dir, ec);
  if (ec) {
    std::cerr << "fabtrack locate: cannot create " << request.work_dir << ": " << ec.message()
              << "\n";
    throw CommandExit{kCouldNotRun};
  }
  struct Cleanup {
    std::string dir;
    bool own;
    ~Cleanup() {
      std::error_code ec;
      if (own) fs::remove_all(dir, ec);
    }
  } cleanup{request.work_dir, !o.work_dir};

  std::ostream& log = o.format == "json" ? std::cerr : std::cout;
  app::LocateReport report = app::RunLocateFlow(request, log);
  for (const std::string& h : report.unplaced) {
    std::cerr << "fabtrack locate: " << h << " is not in the topology: its uplink is not judged\n";
  }
  if (o.format == "json") {
    std::cout << LocateVerdictToJson(report.verdict, report.seconds,
                                     static_cast<int>(report.topology.nodes.size()),
                                     static_cast<int>(report.probes.size()))
                     .dump(2)
              << "\n";
  } else {
    PrintText(report, scan_topology ? &*scan_topology : nullptr);
  }
  const int code = app::LocateExitCode(report.verdict);
  if (report.budget_spent) {
    std::cerr << "fabtrack locate: the budget of " << o.budget_s
              << " s was spent before the verdict settled\n";
  }
  if (o.cluster) {
    LocateRecord record;
    record.cluster = *o.cluster;
    record.located_at = UtcNowIso();
    record.hosts = report.topology.nodes;
    record.verdict = report.verdict;
    record.seconds = report.seconds;
    record.probes = static_cast<int>(report.probes.size());
    record.exit_status = code;
    record.budget_spent = report.budget_spent;
    record.sweep_id = o.sweep_id;
    record.run_ids = run_ids;
    app::LocateStored stored = app::StoreLocateVerdict(o.database, record, std::cerr);
    std::ostream& out = o.format == "json" ? std::cerr : std::cout;
    if (stored.stored) {
      out << "locate: verdict " << stored.verdict_id << " stored for cluster " << *o.cluster
          << "\n";
    } else {
      out << "locate: verdict spooled for cluster " << *o.cluster
          << " (stored when the database is back)\n";
    }
  }
  if (code != 0) throw CommandExit{code};
}

}  // namespace

void SetupLocate(CLI::App& app) {
  auto o = std::make_shared<LocateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "locate", "Name the slow node or uplink in few rounds of one-way pair probes");
  cmd->add_option("--hosts", o->hosts, "comma-separated hosts (one rank each)");
  cmd->add_option("--hostfile", o->hostfile, "an Open MPI / MPICH hostfile of the hosts");
  cmd->add_option(
      "--topology", o->topology,
      "leaf/spine topology: fabtrack's topology file, ibnetdiscover output or a `fabric scan "
      "--format json` document (whose uplink counters are then printed beside an "
      "uplink suspect)");
  cmd->add_option("--mpirun", o->mpirun,
                  "launcher prefix before -np, e.g. \"scripts/netns-fabric.sh mpirun --\"");
  cmd->add_option("--probe", o->probe, "path of fabtrack-pairprobe");
  cmd->add_option("--work-dir", o->work_dir,
                  "where round results go (shared with the nodes; default a temp dir)");
  cmd->add_option("--max-rounds", o->max_rounds, "round budget (default 2*ceil(log2 N)+2)")
      ->check(PositiveCount());
  cmd->add_option("--budget", o->budget_s,
                  "wall-clock budget in seconds: no round starts that would not fit, a round "
                  "still running when it is spent is stopped; the verdict says so")
      ->check(PositiveAmount());
  AddFormatOption(cmd, &o->format, {"text", "json"});
  cmd->add_option("--cluster", o->cluster,
                  "store the verdict for this cluster (spooled when the database is away)")
      ->check(NameValue());
  cmd->add_option("--sweep-id", o->sweep_id, "link the verdict to this sweep's runs")
      ->check(NameValue());
  cmd->add_option("--run-id", o->run_ids, "link the verdict to this run (repeatable)");
  OperatorTimeRules since;
  since.refuse_far_future = true;
  cmd->add_option("--flagged-since", o->flagged_since,
                  "locate only when the analysis flagged a run of --cluster started since this "
                  "time (the nightly job); the verdict is linked to those runs")
      ->transform(OperatorTimeValue(since));
  cmd->add_option("--flagged-by", o->flagged_by,
                  "finding kinds that flag a run (default "
                  "scaling_drop,busbw_regression,midsize_busbw_regression,latency_regression,"
                  "latency_jitter)");
  AddDatabaseOptions(cmd, &o->database);
  cmd->callback([o] { RunLocate(*o); });
}

}  // namespace fabtrack::cli
