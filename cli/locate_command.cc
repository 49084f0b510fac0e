// fabtrack locate: name the slow node or uplink in few rounds of pair probes.
//   fabtrack locate [--hosts a,b,c | --hostfile F | (Slurm allocation)]
//                   [--topology FILE] [--mpirun "CMD ..."] [--format text|json]
//                   [--max-rounds N] [--probe PATH] [-- <fabtrack-pairprobe flags>]
// Exit: 0 no suspect, 1 a suspect (warning), 2 a settled strong suspect
// (critical), 3 could not run; 2 also for bad flags, as every command.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include "app/locate_flow.h"
#include "cli/commands.h"
#include "collector/parse/locate_topology_parser.h"
#include "collector/sweep/sweep_plan.h"
#include "core/locate_json.h"
#include "core/subprocess.h"

namespace fabtrack::cli {
namespace {
namespace fs = std::filesystem;

constexpr int kCouldNotRun = 3;

struct LocateOptions {
  std::optional<std::string> hosts, hostfile, topology, mpirun, probe, work_dir;
  std::string format = "text";
  int max_rounds = 0;
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

void PrintText(const app::LocateReport& report) {
  const LocateVerdict& v = report.verdict;
  std::cout << "locate: " << report.topology.nodes.size() << " nodes";
  if (report.topology.HasLeaves()) {
    std::set<std::string> leaves;
    for (const auto& [node, leaf] : report.topology.leaf_of) leaves.insert(leaf);
    std::cout << " on " << leaves.size() << " leaves";
  }
  std::cout << ", " << v.rounds << " round(s), " << report.probes.size() << " one-way probes, "
            << report.seconds << " s\n";
  if (v.suspects.empty()) {
    std::cout << "no fault found (healthy spread: bandwidth " << 100 * v.busbw_spread
              << "%, small-message latency " << 100 * v.latency_spread << "%)\n";
    return;
  }
  if (!v.settled) std::cout << "not settled: the measurements fit more than one explanation\n";
  int i = 0;
  for (const LocateSuspect& s : v.suspects) {
    std::cout << "suspect " << ++i << ": " << s.kind << " " << s.name << " (score " << s.score
              << ")\n";
    for (const std::string& e : s.evidence) std::cout << "  " << e << "\n";
  }
}

void RunLocate(const LocateOptions& o) {
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
  if (o.topology) {
    std::ifstream in(*o.topology);
    if (!in) {
      std::cerr << "fabtrack locate: cannot read --topology " << *o.topology << "\n";
      throw CommandExit{kExitUsage};
    }
    ParsedTopology parsed =
        ParseTopology(std::string((std::istreambuf_iterator<char>(in)), {}), *o.topology);
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
    PrintText(report);
  }
  if (int code = app::LocateExitCode(report.verdict); code != 0) throw CommandExit{code};
}

}  // namespace

void SetupLocate(CLI::App& app) {
  auto o = std::make_shared<LocateOptions>();
  CLI::App* cmd = app.add_subcommand(
      "locate", "Name the slow node or uplink in few rounds of one-way pair probes");
  cmd->add_option("--hosts", o->hosts, "comma-separated hosts (one rank each)");
  cmd->add_option("--hostfile", o->hostfile, "an Open MPI / MPICH hostfile of the hosts");
  cmd->add_option("--topology", o->topology,
                  "leaf/spine topology: fabtrack's topology file or ibnetdiscover output");
  cmd->add_option("--mpirun", o->mpirun,
                  "launcher prefix before -np, e.g. \"scripts/netns-fabric.sh mpirun --\"");
  cmd->add_option("--probe", o->probe, "path of fabtrack-pairprobe");
  cmd->add_option("--work-dir", o->work_dir,
                  "where round results go (shared with the nodes; default a temp dir)");
  cmd->add_option("--max-rounds", o->max_rounds, "round budget (default 2*ceil(log2 N)+2)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--format", o->format, "text or json")->check(CLI::IsMember({"text", "json"}));
  cmd->callback([o] { RunLocate(*o); });
}

}  // namespace fabtrack::cli
