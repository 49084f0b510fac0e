// fabtrack import FILE... [--host H] [--cluster C] [--at TIME] [--device D]
// Port dumps operators already collect (ibstat, ibstatus, perfquery -x,
// ibv_devinfo -v) stored as port samples, so deltas and detectors use them
// like live sysfs reads. Every file is parsed before anything is stored: one
// unusable file stores nothing (exit 1, file:line named).
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "app/batch_store.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/parse/port_dump_parser.h"
#include "core/clock.h"
#include "core/port_sample_json.h"

namespace fabtrack::cli {
namespace {

struct ImportOptions {
  std::vector<std::string> paths;
  std::optional<std::string> host, cluster, at, device;
  DatabaseOptions database;
};

// "gpu-b07.ibstat.txt" -> "gpu-b07": dumps are usually saved per host.
std::string HostFromFileName(const std::string& path) {
  std::string name = std::filesystem::path(path).filename().string();
  return name.substr(0, name.find('.'));
}

std::string MtimeIso(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return UtcNowIso();
  return IsoFromSeconds(static_cast<double>(st.st_mtime));
}

// Two dumps of one port (ibstat's state, perfquery's counters) become one
// sample: the later file fills what the earlier left out.
void MergeInto(PortSample* into, const PortSample& from) {
  auto fill = [&](auto field) {
    if (!(into->*field)) into->*field = from.*field;
  };
  auto fill_each = [&](auto... fields) { (fill(fields), ...); };
  fill_each(&PortSample::link_layer, &PortSample::state, &PortSample::state_code,
            &PortSample::phys_state, &PortSample::phys_state_code, &PortSample::rate_gbps,
            &PortSample::rate_text, &PortSample::lid, &PortSample::node_guid,
            &PortSample::fw_version, &PortSample::board_id, &PortSample::xmit_bytes,
            &PortSample::rcv_bytes);
  into->counters.insert(from.counters.begin(), from.counters.end());
}

void RunImport(const ImportOptions& o) {
  // (host, time) -> the host's ports at that time, from every file of it.
  std::map<std::pair<std::string, std::string>, HostPorts> samples;
  bool failed = false;
  for (const std::string& path : o.paths) {
    std::ifstream in(path);
    if (!in) {
      std::cerr << path << ": cannot read: " << std::strerror(errno) << "\n";
      failed = true;
      continue;
    }
    std::stringstream text;
    text << in.rdbuf();
    std::string why;
    std::optional<ParsedPortDump> dump = ParsePortDump(text.str(), o.device, &why);
    if (!dump) {
      std::cerr << path << ":1: " << why << "\n";
      failed = true;
      continue;
    }
    for (const PortDumpError& e : dump->errors) {
      std::cerr << path << ":" << e.line << ": " << e.message << "\n";
      failed = true;
    }
    const std::string host = o.host.value_or(HostFromFileName(path));
    const std::string at = o.at.value_or(MtimeIso(path));
    HostPorts& h = samples[{host, at}];
    h.host = host;
    for (const PortSample& p : dump->ports) {
      auto same = std::find_if(h.ports.begin(), h.ports.end(), [&](const PortSample& q) {
        return q.device == p.device && q.port == p.port;
      });
      if (same == h.ports.end()) {
        h.ports.push_back(p);
      } else {
        MergeInto(&*same, p);
      }
    }
    std::cerr << path << ": " << PortDumpFormatName(dump->format) << ", " << dump->ports.size()
              << " port(s) of " << host << " at " << at << "\n";
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
    size_t n = 0;
    for (const store::AppliedBatch& a : outcome.applied) n += a.samples;
    std::cout << "stored " << n << " port sample(s) of " << samples.size()
              << " host snapshot(s) in cluster " << *o.cluster << "\n";
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
      "Store port dumps (ibstat, ibstatus, perfquery -x, ibv_devinfo -v output) as port samples");
  cmd->add_option("files", o->paths, "dump files (format recognised from the text)")->required();
  cmd->add_option("--host", o->host,
                  "the host they describe (default: file name up to its first dot)");
  cmd->add_option("--cluster", o->cluster,
                  "store into this cluster (without it: print the samples as JSON)");
  cmd->add_option("--at", o->at, "when they were taken, RFC 3339 (default: each file's mtime)");
  cmd->add_option("--device", o->device,
                  "the HCA of a perfquery dump (perfquery prints only LIDs)");
  AddDatabaseOptions(cmd, &o->database);
  cmd->callback([o] {
    if (o->at && !ParseIsoSeconds(*o->at)) {
      std::cerr << "fabtrack import: --at " << *o->at
                << ": not a time; use RFC 3339, e.g. 2026-12-01T02:00:00Z\n";
      throw CommandExit{kExitUsage};
    }
    RunImport(*o);
  });
}

}  // namespace fabtrack::cli
