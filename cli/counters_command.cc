// fabtrack counters snapshot|watch|metrics|serve|ethtool|verbs: the ports of this host;
// counters cpu: its CPUs (the sweep's CPU bracket runs it on every node).
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <iostream>
#include <thread>

#include "app/batch_store.h"
#include "app/this_process.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "cli/metrics_serve.h"
#include "collector/counters/ethtool_stats.h"
#include "collector/counters/hw_counter_selection.h"
#include "collector/counters/metrics_http_server.h"
#include "collector/counters/node_cpu.h"
#include "collector/counters/port_exposition.h"
#include "collector/counters/sysfs_ports.h"
#include "collector/counters/verbs_ports.h"
#include "core/atomic_file.h"
#include "core/clock.h"
#include "core/node_cpu.h"
#include "core/port_sample_json.h"

namespace fabtrack::cli {
namespace {

struct SnapshotOptions {
  std::string sysfs = "/sys";
  std::string format = "json";
  std::optional<std::string> host;
  std::optional<std::string> cluster;
  std::optional<std::string> output;
  std::optional<std::string> ethtool_dumps;  // saved `ethtool -S` outputs, one file per netdev
  HwCounterSelection hw_counters;
  bool store = false;
  DatabaseOptions database;
};

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

// RoCE ports: PFC pause and per-priority counters of their netdev.
// PFC/pause statistics of every RoCE port's netdev: live through the ethtool
// ioctl, or from saved `ethtool -S` dumps in `dumps_dir` (one file per netdev).
void AddFlowControl(HostPorts* host, const std::optional<std::string>& dumps_dir) {
  for (PortSample& p : host->ports) {
    if (p.link_layer != "Ethernet" || !p.netdev) continue;
    EthtoolStats stats =
        dumps_dir ? ReadEthtoolDump(*dumps_dir, *p.netdev) : ReadEthtoolStats(*p.netdev);
    if (!stats.error.empty()) {
      host->problems.push_back({*p.netdev, "ethtool statistics: " + stats.error});
      if (stats.values.empty()) continue;
    }
    p.ethtool = FlowControlStats(stats.values);
  }
}

// Live statistics only on the live tree: a fake tree's netdevs are not this host's.
bool ReadsFlowControl(const std::string& sysfs, const std::optional<std::string>& dumps_dir) {
  return sysfs == "/sys" || dumps_dir.has_value();
}

void RunSnapshot(const SnapshotOptions& o) {
  const bool storing = o.store || o.database.db.has_value() || o.cluster.has_value();
  std::optional<std::string> cluster = o.cluster;
  if (!cluster) {
    if (const char* env = std::getenv("FABTRACK_CLUSTER"); env && *env) cluster = env;
  }
  if (storing && !cluster) {
    std::cerr << "fabtrack counters snapshot: storing needs --cluster (or FABTRACK_CLUSTER)\n";
    throw CommandExit{kExitUsage};
  }
  std::optional<app::BatchStore> database;
  if (storing) database.emplace(o.database, std::cerr);

  WarnMissingHwCounters("counters snapshot", o.sysfs, o.hw_counters);
  const std::string sampled_at = UtcNowIso();
  HostPorts host = ReadSysfsPorts(o.sysfs, o.hw_counters);
  host.host = o.host.value_or(app::LocalHostname());
  host.kernel_release = KernelRelease();
  // The netdevs of a fake tree (--sysfs elsewhere) are not this host's.
  if (ReadsFlowControl(o.sysfs, o.ethtool_dumps)) AddFlowControl(&host, o.ethtool_dumps);
  for (const PortProblem& p : host.problems) {
    std::cerr << "fabtrack counters: " << p.path << ": " << p.message << "\n";
  }
  if (o.output) {
    // "{host}" lets every node of a sweep write its own file in one shared
    // directory; written atomically, so a reader never sees half a sample.
    std::string path = *o.output;
    if (size_t at = path.find("{host}"); at != std::string::npos) path.replace(at, 6, host.host);
    try {
      WriteFileAtomically(path, HostPortsToJson(host).dump() + "\n");
    } catch (const std::exception& e) {
      std::cerr << "fabtrack counters snapshot: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
  } else if (o.format == "json") {
    std::cout << HostPortsToJson(host).dump(2) << "\n";
  } else {
    PrintTable(host);
  }
  if (!storing) return;
  store::SpoolBatch batch;
  batch.kind = store::SpoolBatch::Kind::kHostSample;
  batch.cluster = *cluster;
  batch.sampled_at = sampled_at;
  batch.phase = "snapshot";
  batch.host = host;
  std::vector<store::SpoolBatch> batches;
  batches.push_back(std::move(batch));
  app::StoreOutcome outcome;
  try {
    outcome = database->Store(std::move(batches));
  } catch (const app::BatchRefused& e) {
    std::cerr << "fabtrack counters: the database refused the sample: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  if (outcome.stored) {
    std::cerr << "fabtrack counters: stored " << outcome.applied.front().samples
              << " port sample(s) for " << host.host << "\n";
    return;
  }
  if (!outcome.failure.empty()) {
    std::cerr << "fabtrack counters: not stored: " << outcome.failure << "\n";
  }
  database->Finish();
}

volatile std::sig_atomic_t stop_requested = 0;
void RequestStop(int) { stop_requested = 1; }

struct CpuOptions {
  std::string proc = "/proc";
  std::string format = "json";
  std::optional<std::string> host;
  std::optional<std::string> output;
};

// One reading of this host's CPUs: JSON (core/node_cpu.h) to FILE ("{host}"
// as in snapshot) or stdout, or a table.
void RunCpu(const CpuOptions& o) {
  NodeCpuReading reading = ReadNodeCpu(o.proc, static_cast<int>(getpid()));
  if (!reading.error.empty()) {
    std::cerr << "fabtrack counters cpu: " << reading.error << "\n";
    throw CommandExit{kExitInputError};
  }
  NodeCpuSample& s = reading.sample;
  s.host = o.host.value_or(app::LocalHostname());
  s.taken_at = UtcNowIso();
  if (o.output) {
    std::string path = *o.output;
    if (size_t at = path.find("{host}"); at != std::string::npos) path.replace(at, 6, s.host);
    try {
      WriteFileAtomically(path, NodeCpuSampleToJson(s).dump() + "\n");
    } catch (const std::exception& e) {
      std::cerr << "fabtrack counters cpu: " << e.what() << "\n";
      throw CommandExit{kExitInputError};
    }
  } else if (o.format == "json") {
    std::cout << NodeCpuSampleToJson(s).dump(2) << "\n";
  } else {
    std::printf("%s: %d CPUs, load %.2f %.2f %.2f (%d/%d), %zu other processes with CPU time\n",
                s.host.c_str(), s.cpus, s.load.load1, s.load.load5, s.load.load15, s.load.runnable,
                s.load.threads, s.processes.size());
    std::printf(
        "ticks: user %lld nice %lld system %lld idle %lld iowait %lld irq %lld softirq "
        "%lld steal %lld (%lld/s)\n",
        static_cast<long long>(s.times.user), static_cast<long long>(s.times.nice),
        static_cast<long long>(s.times.system), static_cast<long long>(s.times.idle),
        static_cast<long long>(s.times.iowait), static_cast<long long>(s.times.irq),
        static_cast<long long>(s.times.softirq), static_cast<long long>(s.times.steal),
        static_cast<long long>(s.ticks_per_second));
  }
}

struct ServeOptions {
  std::string sysfs = "/sys";
  MetricsServeSettings serve{"counters serve", "0.0.0.0:9477", std::nullopt, std::nullopt};
  HwCounterSelection hw_counters;
};

// What one scrape reads: every port, plus RoCE flow control on the real /sys.
HostPorts ReadForScrape(const std::string& sysfs, const HwCounterSelection& hw) {
  HostPorts host = ReadSysfsPorts(sysfs, hw);
  if (sysfs == "/sys") AddFlowControl(&host, std::nullopt);
  return host;
}

// Times one reading for fabtrack_scrape_collector_*: a reading that throws
// exports no ports and success 0, as node_exporter does for a failed collector.
template <typename ReadPorts>
const std::string& RenderScrape(PortExposition* exposition, ReadPorts read_ports,
                                const HwCounterSelection& hw,
                                const SamplerPlan* sampler = nullptr) {
  static const HostPorts kNoPorts;
  auto start = std::chrono::steady_clock::now();
  const HostPorts* host = &kNoPorts;
  bool ok = true;
  try {
    host = &read_ports();
  } catch (const std::exception&) {
    ok = false;
  }
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return exposition->Render(
      *host, {.duration_seconds = seconds, .success = ok, .sampler = sampler, .hw_counters = &hw});
}

void RunMetrics(const ServeOptions& o) {
  WarnMissingHwCounters("counters metrics", o.sysfs, o.hw_counters);
  PortExposition exposition;
  HostPorts host;
  std::cout << RenderScrape(
      &exposition,
      [&]() -> const HostPorts& {
        host = ReadForScrape(o.sysfs, o.hw_counters);
        return host;
      },
      o.hw_counters);
}

void RunServe(const ServeOptions& o) {
  // Scrapes pread the counter files one sampler keeps open and render into
  // one reused buffer; the server's one thread takes scrapes one at a time.
  // The selection is the sampler's: every new plan (hot plug, driver
  // reload, the periodic re-check) keeps it.
  WarnMissingHwCounters("counters serve", o.sysfs, o.hw_counters);
  SysfsPortSampler sampler(o.sysfs, kSamplerRediscoverAfterSeconds, o.hw_counters);
  sampler.OnPlanChange([](const SamplerPlan& plan) {
    std::cerr << "fabtrack counters serve: " << DescribePlan(plan) << "\n";
  });
  PortExposition exposition;
  HostPorts with_flow_control;
  const bool real_sysfs = o.sysfs == "/sys";
  ServeMetrics(o.serve, [&]() -> const std::string& {
    return RenderScrape(
        &exposition,
        [&]() -> const HostPorts& {
          if (!real_sysfs) return sampler.Sample();
          with_flow_control = sampler.Sample();
          AddFlowControl(&with_flow_control, std::nullopt);
          return with_flow_control;
        },
        o.hw_counters, &sampler.plan());
  });
}

struct EthtoolOptions {
  std::string netdev;
  bool all = false;
  std::string format = "text";
};

void RunEthtool(const EthtoolOptions& o) {
  EthtoolStats stats = ReadEthtoolStats(o.netdev);
  if (!stats.error.empty()) {
    std::cerr << "fabtrack counters ethtool: " << stats.error << "\n";
    throw CommandExit{kExitInputError};
  }
  std::map<std::string, uint64_t> shown = o.all ? stats.values : FlowControlStats(stats.values);
  if (shown.empty()) {
    // Silence would read as "no pauses"; say what the driver does report.
    std::cerr << "fabtrack counters ethtool: " << o.netdev << ": the driver reports "
              << stats.values.size() << " statistic(s)"
              << (stats.values.empty() ? "" : ", none of them flow control (pause/PFC/ECN/CNP)")
              << (stats.values.empty() || o.all ? "" : "; --all lists them") << "\n";
  }
  if (o.format == "json") {
    std::cout << nlohmann::json(shown).dump(2) << "\n";
  } else {
    for (const auto& [name, value] : shown) std::cout << name << ": " << value << "\n";
  }
}

struct WatchOptions {
  std::string sysfs = "/sys";
  double interval = 10.0;
  std::optional<int> count;        // stop after this many samples
  std::optional<double> duration;  // or after this many seconds
  int batch = 30;                  // samples per transaction
  std::optional<std::string> host;
  std::optional<std::string> cluster;
  std::optional<int64_t> run_id;
  std::optional<std::string> ethtool_dumps;
  HwCounterSelection hw_counters;
  DatabaseOptions database;
};

void RunWatch(const WatchOptions& o) {
  std::optional<std::string> cluster = o.cluster;
  if (!cluster) {
    if (const char* env = std::getenv("FABTRACK_CLUSTER"); env && *env) cluster = env;
  }
  if (!cluster) {
    std::cerr << "fabtrack counters watch: needs --cluster (or FABTRACK_CLUSTER)\n";
    throw CommandExit{kExitUsage};
  }
  // A database that is down at the start or goes away later is waited out:
  // samples are spooled and the next batch tries to reconnect (which replays
  // the spool first), so a long watch never loses what it sampled.
  app::BatchStore database(o.database, std::cerr);
  std::signal(SIGINT, RequestStop);
  std::signal(SIGTERM, RequestStop);
  const std::string host = o.host.value_or(app::LocalHostname());
  std::vector<std::pair<std::string, HostPorts>> pending;
  size_t stored = 0, spooled = 0;
  auto flush = [&] {
    if (pending.empty()) return;
    database.Reconnect();
    std::vector<store::SpoolBatch> batches;
    size_t ports = 0;
    for (auto& [at, sample] : pending) {
      store::SpoolBatch& batch = batches.emplace_back();
      batch.kind = store::SpoolBatch::Kind::kHostSample;
      batch.cluster = *cluster;
      batch.sampled_at = at;
      batch.phase = "watch";
      batch.run_id = o.run_id;
      ports += sample.ports.size();
      batch.host = std::move(sample);
    }
    pending.clear();
    app::StoreOutcome outcome;
    try {
      outcome = database.Store(std::move(batches));  // one transaction per batch
    } catch (const app::BatchRefused& e) {
      std::cerr << "fabtrack counters watch: the database refused a batch: " << e.what() << "\n";
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty()) {
      std::cerr << "fabtrack counters watch: not stored: " << outcome.failure << "\n";
    }
    if (!outcome.stored) {
      spooled += ports;
      return;
    }
    for (const store::AppliedBatch& applied : outcome.applied) stored += applied.samples;
  };
  WarnMissingHwCounters("counters watch", o.sysfs, o.hw_counters);
  // File descriptors kept open between samples.
  SysfsPortSampler sampler(o.sysfs, kSamplerRediscoverAfterSeconds, o.hw_counters);
  sampler.OnPlanChange([](const SamplerPlan& plan) {
    std::cerr << "fabtrack counters watch: " << DescribePlan(plan) << "\n";
  });
  const auto start = std::chrono::steady_clock::now();
  auto next = start;
  for (int taken = 0; !stop_requested; ++taken) {
    if (o.count && taken >= *o.count) break;
    if (o.duration &&
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() >=
            *o.duration) {
      break;
    }
    HostPorts sample = sampler.Sample();
    sample.host = host;
    // PFC pauses are where RoCE congestion shows: read with every sample.
    if (ReadsFlowControl(o.sysfs, o.ethtool_dumps)) AddFlowControl(&sample, o.ethtool_dumps);
    if (taken == 0) {
      for (const PortProblem& p : sample.problems) {
        std::cerr << "fabtrack counters: " << p.path << ": " << p.message << "\n";
      }
    }
    pending.emplace_back(UtcNowIso(), std::move(sample));
    if (static_cast<int>(pending.size()) >= o.batch) flush();
    // Fixed rate: the next tick is scheduled from the start, not from now,
    // so slow reads do not drift the series.
    next += std::chrono::microseconds(static_cast<int64_t>(o.interval * 1e6));
    while (!stop_requested && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(
          next - std::chrono::steady_clock::now(), std::chrono::milliseconds(200)));
    }
  }
  flush();
  std::cerr << "fabtrack counters watch: stored " << stored << " port sample(s) for " << host;
  if (spooled) std::cerr << ", spooled " << spooled << " while the database was away";
  std::cerr << "\n";
  database.Finish();
}

struct VerbsOptions {
  std::string sysfs = "/sys";
  std::string format = "text";
};

// libibverbs' view next to sysfs: proves the user-space RDMA stack opens the
// devices, and flags ports where the two disagree. Exit 1 on a difference.
void RunVerbs(const VerbsOptions& o) {
  VerbsReport verbs = QueryVerbsPorts();
  HostPorts sysfs = ReadSysfsPorts(o.sysfs);
  std::vector<std::string> differences = CrossCheck(sysfs, verbs);
  if (o.format == "json") {
    std::cout << nlohmann::json{{"devices", VerbsDevicesJson(verbs.devices)},
                                {"differences", differences},
                                {"error", verbs.error}}
                     .dump(2)
              << "\n";
  } else {
    if (verbs.devices.empty()) std::cout << "libibverbs: no RDMA devices\n";
    for (const VerbsDevice& d : verbs.devices) {
      std::cout << d.name << " fw " << d.fw_version << "\n";
      for (const VerbsPort& p : d.ports) {
        std::cout << "  port " << p.port << ": " << p.state << " " << p.link_layer << " "
                  << p.rate_gbps() << " Gb/s\n";
      }
    }
    for (const auto& d : differences) std::cout << "difference: " << d << "\n";
  }
  if (!verbs.error.empty()) std::cerr << "fabtrack counters verbs: " << verbs.error << "\n";
  if (!differences.empty() || !verbs.error.empty()) throw CommandExit{kExitInputError};
}

}  // namespace

void SetupCounters(CLI::App& app) {
  CLI::App* counters =
      app.add_subcommand("counters", "InfiniBand/RoCE port state and counters from sysfs");
  counters->require_subcommand(1);
  auto o = std::make_shared<SnapshotOptions>();
  CLI::App* snapshot = counters->add_subcommand("snapshot", "Read every RDMA port once");
  snapshot->add_option("--sysfs", o->sysfs, "sysfs root (default /sys; tests use fake trees)");
  snapshot->add_option(
      "--ethtool-dumps", o->ethtool_dumps,
      "RoCE PFC/pause counters from `ethtool -S NETDEV` outputs saved as DIR/NETDEV "
      "(default: the live netdevs when --sysfs is /sys)");
  AddFormatOption(snapshot, &o->format, {"json", "table"});
  AddHwCountersOption(snapshot, &o->hw_counters);
  snapshot->add_option("--output", o->output,
                       "write the JSON to FILE instead of stdout; {host} in FILE becomes the "
                       "host name (one file per node in a shared directory)");
  snapshot->add_option("--host", o->host, "host name to record (default: this host's)")
      ->check(NameValue());
  snapshot->add_option("--cluster", o->cluster, "store under this cluster (or FABTRACK_CLUSTER)")
      ->check(NameValue());
  snapshot->add_flag("--store", o->store, "store the sample in the configured database");
  AddDatabaseOptions(snapshot, &o->database);
  snapshot->callback([o] { RunSnapshot(*o); });

  auto c = std::make_shared<CpuOptions>();
  CLI::App* cpu = counters->add_subcommand(
      "cpu", "Read this host's CPUs once (/proc/stat, /proc/loadavg, other processes' CPU time)");
  cpu->add_option("--proc", c->proc, "proc root (default /proc; tests use fake trees)");
  AddFormatOption(cpu, &c->format, {"json", "table"});
  cpu->add_option("--output", c->output,
                  "write the JSON to FILE instead of stdout; {host} in FILE becomes the host name "
                  "(one file per node in a shared directory)");
  cpu->add_option("--host", c->host, "host name to record (default: this host's)")
      ->check(NameValue());
  cpu->callback([c] { RunCpu(*c); });

  auto w = std::make_shared<WatchOptions>();
  CLI::App* watch = counters->add_subcommand(
      "watch", "Sample every port at a fixed interval (during a run) and store in batches");
  watch->add_option("--sysfs", w->sysfs, "sysfs root (default /sys)");
  watch->add_option("--ethtool-dumps", w->ethtool_dumps,
                    "RoCE PFC/pause counters from `ethtool -S NETDEV` outputs saved as DIR/NETDEV "
                    "(default: the live netdevs when --sysfs is /sys)");
  watch->add_option("--interval", w->interval, "seconds between samples (default 10)")
      ->check(CLI::Range(0.01, 86400.0));
  watch->add_option("--count", w->count, "stop after N samples")->check(PositiveCount());
  watch->add_option("--duration", w->duration, "stop after S seconds")->check(PositiveAmount());
  watch->add_option("--batch", w->batch, "samples per database transaction (default 30)")
      ->check(PositiveCount());
  watch->add_option("--run-id", w->run_id, "attach the samples to this run")->check(StoredId());
  watch->add_option("--host", w->host, "host name to record (default: this host's)")
      ->check(NameValue());
  watch->add_option("--cluster", w->cluster, "cluster (or FABTRACK_CLUSTER)")->check(NameValue());
  AddHwCountersOption(watch, &w->hw_counters);
  AddDatabaseOptions(watch, &w->database);
  watch->callback([w] { RunWatch(*w); });

  auto m = std::make_shared<ServeOptions>();
  CLI::App* metrics = counters->add_subcommand(
      "metrics", "Print the Prometheus exposition text of one reading (what serve would answer)");
  metrics->add_option("--sysfs", m->sysfs, "sysfs root (default /sys)");
  AddHwCountersOption(metrics, &m->hw_counters);
  metrics->callback([m] { RunMetrics(*m); });

  auto sv = std::make_shared<ServeOptions>();
  CLI::App* serve = counters->add_subcommand(
      "serve", "Prometheus exporter: node_infiniband_* plus RoCE hw/PFC counters");
  serve->add_option("--sysfs", sv->sysfs, "sysfs root (default /sys)");
  AddMetricsServeOptions(serve, &sv->serve);
  AddHwCountersOption(serve, &sv->hw_counters);
  serve->callback([sv] { RunServe(*sv); });

  auto e = std::make_shared<EthtoolOptions>();
  CLI::App* ethtool = counters->add_subcommand(
      "ethtool", "A netdev's flow-control (PFC/pause) statistics via the ethtool ioctl");
  ethtool->add_option("netdev", e->netdev, "network interface, e.g. ens1f0np0")->required();
  ethtool->add_flag("--all", e->all, "every statistic, not only flow control");
  AddFormatOption(ethtool, &e->format, {"text", "json"});
  ethtool->callback([e] { RunEthtool(*e); });

  auto v = std::make_shared<VerbsOptions>();
  CLI::App* verbs = counters->add_subcommand(
      "verbs", "Cross-check sysfs with libibverbs (ibv_query_port); exit 1 on a difference");
  verbs->add_option("--sysfs", v->sysfs, "sysfs root to compare with (default /sys)");
  AddFormatOption(verbs, &v->format, {"text", "json"});
  verbs->callback([v] { RunVerbs(*v); });
}

}  // namespace fabtrack::cli
