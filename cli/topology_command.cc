// fabtrack topology check FILE... [--sysfs ROOT] [--format text|json]
// fabtrack topology ingest FILE|--sysfs ROOT --host H --cluster C [--db CONNINFO]
// Reads each node's GPU/NIC wiring (NCCL's NCCL_TOPO_DUMP_FILE XML, an
// `nvidia-smi topo -m` matrix or NCCL GRAPH debug lines, sniffed per file;
// or this node's PCIe tree under a sysfs root) and runs the rail check.
// No database. Exit as analyze: 0 no finding, 1 a warning, 2 a critical
// finding, 3 could not check (a file unreadable, not a topology, or
// malformed: the errors name file:line; also a usage error).
// ingest stores the file's wiring as host H's newest in cluster C (nothing
// when unchanged) and prints the fleet diff of C: the nodes wired unlike the
// majority. Exit as every storing command: 0 stored (whatever the diff
// says), 1 the file is not usable (nothing stored), 3 database.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>

#include "analyzer/topology/rail_check.h"
#include "app/topology_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/parse/node_topology_parser.h"
#include "collector/readiness/pci_topology.h"
#include "core/node_topology_json.h"

namespace fabtrack::cli {
namespace {

constexpr int kCouldNotCheck = 3;
// Topology dumps are kilobytes; anything this large is not one.
constexpr std::streamsize kMaxFileBytes = 64 << 20;

struct TopologyCheckOptions {
  std::vector<std::string> files;
  std::optional<std::string> sysfs;
  std::string format = "text";
};

struct FileVerdict {
  std::string file;
  ParsedNodeTopology parsed;
  std::vector<TopologyFinding> findings;
  std::string unreadable;  // why the file could not be read, or empty
};

FileVerdict CheckFile(const std::string& path) {
  FileVerdict v;
  v.file = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    v.unreadable = std::strerror(errno);
    return v;
  }
  std::string text(static_cast<size_t>(kMaxFileBytes) + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  if (in.bad()) {
    v.unreadable = std::strerror(errno);
    return v;
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMaxFileBytes) {
    v.unreadable = "larger than 64 MiB: not a topology dump";
    return v;
  }
  v.parsed = ParseNodeTopology(text, path);
  v.findings = CheckRails(v.parsed.topology);
  return v;
}

// The node under a sysfs root, as if it were a file of format "sysfs".
FileVerdict CheckSysfs(const std::string& root) {
  FileVerdict v;
  v.file = root;
  v.parsed.format = "sysfs";
  PciTopology pci = ReadPciTopology(root);
  v.parsed.topology = ToNodeTopology(pci);
  // A dangling link or two leave the rest readable; nothing at all is not.
  for (const std::string& p : pci.problems) {
    if (pci.gpus.empty()) {
      v.parsed.errors.push_back(p);
    } else {
      std::cerr << "fabtrack topology: note: " << p << "\n";
    }
  }
  v.findings = CheckRails(v.parsed.topology);
  return v;
}

nlohmann::json ToJson(const FileVerdict& v) {
  nlohmann::json errors = v.parsed.errors;
  if (!v.unreadable.empty()) errors = {v.file + ": " + v.unreadable};
  return {{"file", v.file},
          {"format",
           v.parsed.format.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.parsed.format)},
          {"gpus", TopologyGpusToJson(v.parsed.topology)},
          {"nics", TopologyNicsToJson(v.parsed.topology)},
          {"findings", TopologyFindingsToJson(v.findings)},
          {"errors", errors}};
}

void PrintText(const FileVerdict& v) {
  if (!v.unreadable.empty()) {
    std::cout << v.file << ": cannot read: " << v.unreadable << "\n";
    return;
  }
  const NodeTopology& t = v.parsed.topology;
  std::cout << v.file << " (" << (v.parsed.format.empty() ? "unknown format" : v.parsed.format)
            << "): " << t.gpus.size() << " GPU(s), " << t.nics.size() << " NIC(s)";
  if (v.findings.empty() && v.parsed.errors.empty()) {
    std::cout << ": OK, every GPU has its own NIC at PIX/PXB";
  }
  std::cout << "\n";
  for (const TopoGpu& g : t.gpus) {
    std::cout << "  " << g.name;
    if (!g.bus_id.empty()) std::cout << " " << g.bus_id;
    if (g.nic.empty()) {
      std::cout << " -> no NIC\n";
      continue;
    }
    std::cout << " -> " << g.nic << " " << (g.path ? TopoPathName(*g.path) : "?");
    std::optional<bool> gdr = PairGdr(t, g);
    if (gdr) std::cout << (*gdr ? " gdr" : " no-gdr");
    std::cout << "\n";
  }
  for (const TopologyFinding& f : v.findings) {
    std::cout << "  " << SeverityLabel(f.severity) << " " << f.kind << ": " << f.message << "\n";
  }
}

void RunTopologyCheck(const TopologyCheckOptions& o) {
  int status = 0;
  nlohmann::json all = nlohmann::json::array();
  if (o.files.empty() && !o.sysfs) {
    std::cerr << "fabtrack topology check: give topology files, or --sysfs ROOT\n";
    throw CommandExit{kCouldNotCheck};
  }
  std::vector<std::pair<std::string, bool>> inputs;  // path, is a sysfs root
  for (const std::string& f : o.files) inputs.push_back({f, false});
  if (o.sysfs) inputs.push_back({*o.sysfs, true});
  for (const auto& [file, is_sysfs] : inputs) {
    FileVerdict v = is_sysfs ? CheckSysfs(file) : CheckFile(file);
    if (!v.unreadable.empty()) {
      std::cerr << "fabtrack topology check: cannot read " << file << ": " << v.unreadable << "\n";
      status = kCouldNotCheck;
    }
    for (const std::string& e : v.parsed.errors) std::cerr << e << "\n";
    if (!v.parsed.errors.empty()) status = kCouldNotCheck;
    if (status != kCouldNotCheck) {
      for (const TopologyFinding& f : v.findings) {
        status = std::max(status, static_cast<int>(f.severity));
      }
    }
    if (o.format == "json") {
      all.push_back(ToJson(v));
    } else {
      PrintText(v);
    }
  }
  if (o.format == "json") {
    std::cout << all.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  }
  if (status != 0) throw CommandExit{status};
}

struct TopologyIngestOptions {
  std::string file, host, cluster;
  std::optional<std::string> sysfs;
  DatabaseOptions database;
};

void RunTopologyIngest(const TopologyIngestOptions& o) {
  if (o.file.empty() == !o.sysfs) {
    std::cerr << "fabtrack topology ingest: give one topology file or --sysfs ROOT\n";
    throw CommandExit{kExitUsage};
  }
  FileVerdict v = o.sysfs ? CheckSysfs(*o.sysfs) : CheckFile(o.file);
  if (!v.unreadable.empty()) {
    std::cerr << "fabtrack topology ingest: cannot read " << v.file << ": " << v.unreadable << "\n";
    throw CommandExit{kExitInputError};
  }
  for (const std::string& e : v.parsed.errors) std::cerr << e << "\n";
  if (!v.parsed.errors.empty() || v.parsed.topology.gpus.empty()) {
    std::cerr << "fabtrack topology ingest: nothing stored: " << v.file
              << (v.parsed.errors.empty() ? " has no GPU" : " is not a complete topology") << "\n";
    throw CommandExit{kExitInputError};
  }
  app::TopologyIngestResult r = app::IngestNodeTopology(
      o.database, o.cluster, o.host, v.parsed.format, v.parsed.topology, v.file, std::cerr);
  std::cout << (r.stored ? "stored" : "unchanged") << ": " << o.host << " in " << o.cluster << " ("
            << v.parsed.topology.gpus.size() << " GPU(s), " << v.parsed.topology.nics.size()
            << " NIC(s), " << v.parsed.format << ")\n";
  std::cout << "fleet: " << r.hosts << " node(s) of " << o.cluster << ", " << r.fleet.size()
            << " off the majority\n";
  for (const TopologyFinding& f : r.fleet) {
    std::cout << "  " << SeverityLabel(f.severity) << " " << f.kind << ": " << f.message << "\n";
  }
}

}  // namespace

void SetupTopology(CLI::App& app) {
  CLI::App* topology = app.add_subcommand(
      "topology", "GPU/NIC wiring of nodes: NCCL topology dumps and nvidia-smi topo -m matrices");
  topology->require_subcommand(1);
  auto o = std::make_shared<TopologyCheckOptions>();
  CLI::App* check = topology->add_subcommand(
      "check",
      "Rail check of each file (NCCL_TOPO_DUMP_FILE XML or `nvidia-smi topo -m`, sniffed): "
      "shared NICs, NICs far from their GPU, GPUDirect RDMA off, slow links; no database; "
      "exit 0 ok, 1 warning, 2 critical, 3 could not check");
  check->add_option("files", o->files, "topology files, one node each");
  check->add_option("--sysfs", o->sysfs,
                    "also check this node's PCIe tree under a sysfs root (/sys; tests use fake "
                    "trees); sysfs has no GDR flags or port rates");
  AddFormatOption(check, &o->format, {"text", "json"});
  check->callback([o] { RunTopologyCheck(*o); });

  auto in = std::make_shared<TopologyIngestOptions>();
  CLI::App* ingest = topology->add_subcommand(
      "ingest",
      "Store a node's topology file for its cluster and print the fleet diff (nodes wired "
      "unlike the majority)");
  ingest->add_option("file", in->file,
                     "NCCL topology XML, `nvidia-smi topo -m` output or NCCL GRAPH debug lines");
  ingest->add_option("--sysfs", in->sysfs, "read this node's PCIe tree instead (a sysfs root)");
  ingest->add_option("--host", in->host, "the node the file describes")
      ->check(NameValue())
      ->required();
  ingest->add_option("--cluster", in->cluster, "cluster name")->check(NameValue())->required();
  AddDatabaseOptions(ingest, &in->database);
  ingest->callback([in] { RunTopologyIngest(*in); });
}

}  // namespace fabtrack::cli
