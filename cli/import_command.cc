// fabtrack import FILE... [--host H] [--cluster C] [--at TIME] [--device D]
//                         [--port N] [--netdev IFACE] [--netdev-map FILE]
// Port dumps operators already collect (ibstat, ibstatus, perfquery -x,
// ibv_devinfo -v, ethtool -S, saved sysfs files) stored as port samples, so deltas and detectors
// use them like live sysfs reads: two snapshots of a port at two times give the span between them
// counter deltas (store/snapshot_deltas.h) that the analyzer's port detectors judge. Every file is
// parsed before anything is stored: one unusable file (a bad or cut-off line) stores nothing (exit
// 1, file:line named). A file naming several hosts (`==> gpu-a.txt <==`, prompts) gives each its
// own sample.
#include <sys/stat.h>

#include <iostream>
#include <map>

#include "app/batch_store.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "cli/port_dump_files.h"
#include "collector/parse/port_dump_parser.h"
#include "core/clock.h"
#include "core/port_sample_json.h"

namespace fabtrack::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> paths;
  std::optional<std::string> host, cluster, at, device, netdev, netdev_map;
  std::optional<int> port;
  bool allow_future = false;
  DatabaseOptions database;
};

std::string MtimeIso(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return UtcNowIso();
  return IsoFromSeconds(static_cast<double>(st.st_mtime));
}

void RunImport(const ImportOptions& o) {
  // (host, time) -> the host's ports at that time, from every file of it.
  std::map<std::pair<std::string, std::string>, HostPorts> samples;
  bool failed = false;
  PortDumpContext context{.device = o.device, .port = o.port};
  if (o.netdev_map) {
    std::string text;
    if (!ReadTextFile(*o.netdev_map, &text, std::cerr)) throw CommandExit{kExitInputError};
    std::vector<PortDumpError> errors;
    context.netdev_map = ParseIbdev2netdev(text, &errors);
    for (const PortDumpError& e : errors) {
      std::cerr << *o.netdev_map << ":" << e.line << ": " << e.message << "\n";
      failed = true;
    }
  }
  for (const std::string& path : o.paths) {
    PortDumpContext file_context = context;
    file_context.netdev = o.netdev;  // else from the file's name
    std::optional<std::vector<ParsedPortDump>> dumps =
        ReadPortDumpDocument(path, file_context, std::cerr);
    if (!dumps) {
      failed = true;
      continue;
    }
    if (dumps->size() > 1 && o.host) {
      // --host names the one host of a file; this one names its hosts itself.
      std::cerr << path << ":1: holds the dumps of " << dumps->size()
                << " hosts, each named in it: leave out --host " << *o.host << "\n";
      failed = true;
      continue;
    }
    const std::string at = o.at.value_or(MtimeIso(path));
    for (const ParsedPortDump& dump : *dumps) {
      const std::string host = dump.host.value_or(o.host.value_or(HostFromFileName(path)));
      HostPorts& h = samples[{host, at}];
      h.host = host;
      AddDumpPorts(dump.ports, &h);
      std::string formats;
      for (PortDumpFormat f : dump.formats)
        formats += (formats.empty() ? "" : " + ") + std::string(PortDumpFormatName(f));
      std::cerr << path << ": " << formats << ", " << dump.ports.size() << " port(s) of " << host
                << " at " << at << "\n";
    }
  }
  if (failed) {
    std::cerr << "fabtrack import: nothing stored (fix or leave out the files above)\n";
    throw CommandExit{kExitInputError};
  }
  if (!o.cluster) {
    for (const auto& [key, h] : samples) std::cout << HostPortsToJson(h).dump(2) << "\n";
    return;
  }
  std::vector<store::SpoolBatch> batches;
  for (auto& [key, h] : samples) {
    store::SpoolBatch& b = batches.emplace_back();
    b.kind = store::SpoolBatch::Kind::kHostSample;
    b.cluster = *o.cluster;
    b.sampled_at = key.second;
    b.phase = "snapshot";
    b.host = h;
  }
  app::BatchStore database(o.database, std::cerr);
  app::StoreOutcome outcome;
  try {
    outcome = database.Store(std::move(batches));  // all files in one transaction
  } catch (const app::BatchRefused& e) {
    std::cerr << "fabtrack import: the database refused the samples: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  if (outcome.stored) {
    size_t n = 0, windows = 0;
    for (const store::AppliedBatch& a : outcome.applied) {
      n += a.samples;
      windows += a.snapshot_windows;
    }
    std::cout << "stored " << n << " port sample(s) of " << samples.size()
              << " host snapshot(s) in cluster " << *o.cluster;
    // Counter deltas to the same ports' earlier or later stored snapshots.
    if (windows > 0) std::cout << ", " << windows << " counter window(s) to their other snapshots";
    std::cout << "\n";
    return;
  }
  if (!outcome.failure.empty())
    std::cerr << "fabtrack import: not stored: " << outcome.failure << "\n";
  database.Finish();
}

}  // namespace

void SetupImport(CLI::App& app) {
  auto o = std::make_shared<ImportOptions>();
  CLI::App* cmd = app.add_subcommand(
      "import",
      "Store port dumps (ibstat, ibstatus, perfquery -x, ibv_devinfo -v, ethtool -S output, saved "
      "sysfs files) as port samples");
  cmd->add_option("files", o->paths, "dump files (format recognised from the text)")->required();
  cmd->add_option("--host", o->host,
                  "the host they describe (default: file name up to its first dot)")
      ->check(NameValue());
  cmd->add_option("--cluster", o->cluster,
                  "store into this cluster (without it: print the samples as JSON)")
      ->check(NameValue());
  CLI::Option* allow_future = cmd->add_flag("--allow-future", o->allow_future,
                                            "take an --at more than a day ahead of this clock");
  OperatorTimeRules when_taken;
  when_taken.refuse_far_future = true;
  cmd->add_option("--at", o->at, "when they were taken, RFC 3339 (default: each file's mtime)")
      ->transform(OperatorTimeValue(when_taken, allow_future));
  cmd->add_option("--device", o->device,
                  "the HCA of a perfquery dump (perfquery prints only LIDs) or an ethtool -S dump")
      ->check(NameValue());
  cmd->add_option("--port", o->port, "the HCA port of an ethtool -S dump (default 1)")
      ->check(PositiveCount())
      ->needs("--device");
  cmd->add_option("--netdev", o->netdev,
                  "the interface of an ethtool -S dump (default: from the file name, "
                  "HOST.NETDEV.ethtool)")
      ->check(NameValue());
  cmd->add_option("--netdev-map", o->netdev_map,
                  "ibdev2netdev output: which HCA port each interface belongs to");
  AddDatabaseOptions(cmd, &o->database);
  cmd->callback([o] { RunImport(*o); });
}

}  // namespace fabtrack::cli
