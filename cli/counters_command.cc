// fabtrack counters snapshot [--sysfs ROOT] [--format json|table] [--db ... --cluster NAME]
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <pqxx/pqxx>

#include "cli/commands.h"
#include "cli/database_access.h"
#include "collector/counters/port_sample_json.h"
#include "collector/counters/sysfs_ports.h"
#include "store/port_writer.h"

namespace fabtrack::cli {
namespace {

struct SnapshotOptions {
  std::string sysfs = "/sys";
  std::string format = "json";
  std::optional<std::string> host;
  std::optional<std::string> cluster;
  bool store = false;
  DatabaseOptions database;
};

std::string Hostname() {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  return name;
}

std::string UtcNow() {
  auto now = std::chrono::system_clock::now();
  std::time_t t = std::chrono::system_clock::to_time_t(now);
  long long us =
      std::chrono::duration_cast<std::chrono::microseconds>(now.time_since_epoch()).count() %
      1000000;
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  char out[64];
  std::snprintf(out, sizeof out, "%s.%06lldZ", buf, us);
  return out;
}

void PrintTable(const HostPorts& host) {
  std::printf("%-10s %4s  %-10s  %-8s  %-9s  %8s  %14s  %14s  %s\n", "device", "port", "link",
              "state", "phys", "Gb/s", "xmit_bytes", "rcv_bytes", "saturated");
  for (const PortSample& p : host.ports) {
    std::string saturated;
    for (const auto& s : p.saturated) saturated += (saturated.empty() ? "" : ",") + s;
    std::printf("%-10s %4d  %-10s  %-8s  %-9s  %8s  %14s  %14s  %s\n", p.device.c_str(), p.port,
                p.link_layer.value_or("-").c_str(), p.state.value_or("-").c_str(),
                p.phys_state.value_or("-").c_str(),
                p.rate_gbps ? std::to_string(static_cast<int>(*p.rate_gbps)).c_str() : "-",
                p.xmit_bytes ? std::to_string(*p.xmit_bytes).c_str() : "-",
                p.rcv_bytes ? std::to_string(*p.rcv_bytes).c_str() : "-", saturated.c_str());
  }
}

void RunSnapshot(const SnapshotOptions& o) {
  const bool store = o.store || o.database.db.has_value() || o.cluster.has_value();
  std::optional<std::string> cluster = o.cluster;
  if (!cluster) {
    if (const char* env = std::getenv("FABTRACK_CLUSTER"); env && *env) cluster = env;
  }
  if (store && !cluster) {
    std::cerr << "fabtrack counters snapshot: storing needs --cluster (or FABTRACK_CLUSTER)\n";
    throw CommandExit{kExitUsage};
  }
  std::unique_ptr<pqxx::connection> connection;
  if (store) connection = OpenDatabaseOrExit(o.database, SchemaPolicy::kRequireCurrent, std::cerr);

  const std::string sampled_at = UtcNow();
  HostPorts host = ReadSysfsPorts(o.sysfs);
  host.host = o.host.value_or(Hostname());
  for (const PortProblem& p : host.problems) {
    std::cerr << "fabtrack counters: " << p.path << ": " << p.message << "\n";
  }
  if (o.format == "json") {
    std::cout << HostPortsToJson(host).dump(2) << "\n";
  } else {
    PrintTable(host);
  }
  if (connection) {
    try {
      pqxx::work txn(*connection);
      size_t n = store::WriteHostSample(txn, *cluster, host, sampled_at, std::nullopt, "snapshot");
      txn.commit();
      std::cerr << "fabtrack counters: stored " << n << " port sample(s) for " << host.host << "\n";
    } catch (const std::exception& e) {
      std::cerr << "fabtrack counters: the database refused the sample: " << e.what() << "\n";
      throw CommandExit{kExitDatabaseError};
    }
  }
}

}  // namespace

void SetupCounters(CLI::App& app) {
  CLI::App* counters =
      app.add_subcommand("counters", "InfiniBand/RoCE port state and counters from sysfs");
  counters->require_subcommand(1);
  auto o = std::make_shared<SnapshotOptions>();
  CLI::App* snapshot = counters->add_subcommand("snapshot", "Read every RDMA port once");
  snapshot->add_option("--sysfs", o->sysfs, "sysfs root (default /sys; tests use fake trees)");
  snapshot->add_option("--format", o->format, "json (default) or table")
      ->check(CLI::IsMember({"json", "table"}));
  snapshot->add_option("--host", o->host, "host name to record (default: this host's)");
  snapshot->add_option("--cluster", o->cluster, "store under this cluster (or FABTRACK_CLUSTER)");
  snapshot->add_flag("--store", o->store, "store the sample in the configured database");
  AddDatabaseOptions(snapshot, &o->database);
  snapshot->callback([o] { RunSnapshot(*o); });
}

}  // namespace fabtrack::cli
