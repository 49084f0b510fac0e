// fabtrack check node [--sysfs ROOT] [--proc ROOT] [--expect-rate GBPS]
//                     [--rail-optimized] [--no-verbs] [--format text|json]
//                     [--ports-from DUMP... [--ports-after DUMP... --watch S]]
// Is this node ready for RDMA collectives? Monitoring-plugin output and exit
// status (0 ok, 1 warning, 2 critical, 3 unknown: also a usage error or an
// unreadable root), so Nagios, Slurm's HealthCheckProgram or a prolog
// (scripts/slurm/fabtrack-node-check.sh) can act on it.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "app/this_process.h"
#include "cli/commands.h"
#include "cli/port_dump_files.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/counters/verbs_ports.h"
#include "collector/readiness/node_readiness.h"

extern char** environ;

namespace fabtrack::cli {
namespace {

struct CheckNodeOptions {
  NodeCheckOptions node;
  std::string format = "text";
  double watch_seconds = 0;
  // Port dumps of one host (ibstat, perfquery, ethtool -S, saved sysfs ...)
  // to judge instead of this machine's ports; a later set of them.
  std::vector<std::string> ports_from, ports_after;
};

Environment ProcessEnvironment() {
  Environment env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    std::string kv(*e);
    size_t eq = kv.find('=');
    if (eq != std::string::npos) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

// Why a root cannot be read, or empty.
std::string UnreadableRoot(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_directory(path, ec)) {
    return ec ? ec.message() : std::string(std::strerror(ENOTDIR));
  }
  if (::access(path.c_str(), R_OK | X_OK) != 0) return std::strerror(errno);
  return "";
}

void PrintReport(const NodeReport& report, const std::string& format) {
  if (format == "json") {
    std::cout << NodeReportToJson(report).dump(2) << "\n";
  } else {
    std::cout << FormatNodeReportText(report);
  }
  if (report.status != CheckStatus::kOk) throw CommandExit{static_cast<int>(report.status)};
}

// The ports of the dumps in `paths` (one host at one time); nullopt when one
// cannot be used (printed FILE:LINE).
std::optional<HostPorts> PortsFromDumps(const std::vector<std::string>& paths) {
  HostPorts ports;
  ports.host = HostFromFileName(paths.front());
  bool usable = true;
  for (const std::string& path : paths) {
    std::optional<ParsedPortDump> dump = ReadPortDumpFile(path, PortDumpContext{}, std::cerr);
    if (!dump) {
      usable = false;
      continue;
    }
    AddDumpPorts(dump->ports, &ports);
  }
  if (!usable) return std::nullopt;
  return ports;
}

// What port dumps of a host say: its ports' state, rate and saturated
// counters, and with a later set the error counters that rose in between
// (--watch: how far apart they were taken). The other checks are about
// this machine, not the dumps' host: they do not run.
void CheckPortDumps(const CheckNodeOptions& o) {
  NodeFacts facts;
  std::optional<HostPorts> before = PortsFromDumps(o.ports_from);
  std::optional<HostPorts> after;
  if (!o.ports_after.empty()) after = PortsFromDumps(o.ports_after);
  if (!before || (!o.ports_after.empty() && !after)) {
    std::cout << "FABTRACK NODE UNKNOWN - port dumps not usable (see above)\n";
    throw CommandExit{static_cast<int>(CheckStatus::kUnknown)};
  }
  facts.ports = std::move(*before);
  facts.ports_after = std::move(after);
  facts.watch_seconds = o.watch_seconds;
  facts.ports_from_dumps = true;
  PrintReport(EvaluatePorts(facts, o.node), o.format);
}

void RunCheckNode(const CheckNodeOptions& o) {
  if (!o.ports_from.empty()) {
    CheckPortDumps(o);
    return;
  }
  const std::string host = app::LocalHostname();
  for (const auto& [what, path] :
       {std::pair<const char*, const std::string&>{"sysfs", o.node.sysfs_root},
        {"proc", o.node.proc_root}}) {
    std::string why = UnreadableRoot(path);
    if (why.empty()) continue;
    std::string message = std::string("cannot read ") + what + " root " + path + ": " + why;
    if (o.format == "json") {
      std::cout << nlohmann::json{{"host", host},
                                  {"status", "unknown"},
                                  {"message", message},
                                  {"checks", nlohmann::json::array()}}
                       .dump(2)
                << "\n";
    } else {
      std::cout << "FABTRACK NODE UNKNOWN - " << message << "\n";
    }
    throw CommandExit{static_cast<int>(CheckStatus::kUnknown)};
  }

  NodeFacts facts = GatherNodeFacts(o.node);
  if (o.watch_seconds > 0) {
    // Error counters that move while the node sits idle are a link going bad
    // now, whatever their totals say.
    std::this_thread::sleep_for(std::chrono::duration<double>(o.watch_seconds));
    facts.ports_after = ReadSysfsPorts(o.node.sysfs_root);
    facts.watch_seconds = o.watch_seconds;
  }
  facts.ports.host = host;
  facts.env = ProcessEnvironment();
  // libibverbs always sees the real machine, whatever --sysfs says.
  if (o.node.verbs) facts.verbs = QueryVerbsPorts();
  PrintReport(EvaluateNode(facts, o.node), o.format);
}

}  // namespace

void SetupCheck(CLI::App& app) {
  CLI::App* check = app.add_subcommand(
      "check", "Health checks in the monitoring-plugin convention (exit 0/1/2/3)");
  check->require_subcommand(1);
  auto o = std::make_shared<CheckNodeOptions>();
  CLI::App* node = check->add_subcommand(
      "node",
      "Is this node ready for RDMA collectives? HCA ports, rails, GPUDirect RDMA, "
      "libibverbs, NCCL environment");
  node->add_option("--sysfs", o->node.sysfs_root,
                   "sysfs root (default /sys; tests use fake trees)");
  node->add_option("--proc", o->node.proc_root, "procfs root (default /proc)");
  node->add_option("--expect-rate", o->node.expect_rate_gbps,
                   "expected port rate in Gb/s; slower active ports are a warning")
      ->check(PositiveAmount());
  node->add_flag("--rail-optimized", o->node.rail_optimized,
                 "check one NIC per GPU under the same PCIe switch");
  node->add_flag(
      "--no-verbs", [o](int64_t) { o->node.verbs = false; },
      "skip the libibverbs check (it reads the real machine, not --sysfs)");
  node->add_option("--watch", o->watch_seconds,
                   "read the port counters again after SECONDS: rising error counters are a "
                   "warning, a flapping link (link_downed) critical (default 0: once)")
      ->check(CLI::Range(0.0, 3600.0));
  CLI::Option* from = node->add_option(
      "--ports-from", o->ports_from,
      "judge these port dumps of one host (ibstat, ibstatus, perfquery, ibv_devinfo, ethtool -S, "
      "saved sysfs files) instead of this machine's ports; only the port checks run");
  node->add_option("--ports-after", o->ports_after,
                   "the same host's dumps taken --watch SECONDS later: error counters that rose "
                   "in between")
      ->needs(from)
      ->needs("--watch");
  AddFormatOption(node, &o->format, {"text", "json"});
  node->callback([o] { RunCheckNode(*o); });
}

}  // namespace fabtrack::cli
