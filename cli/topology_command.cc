// fabtrack topology check FILE... [--sysfs ROOT] [--format text|json]
// fabtrack topology ingest FILE|--sysfs ROOT --host H --cluster C [--db CONNINFO]
// Reads each node's GPU/NIC wiring (NCCL's NCCL_TOPO_DUMP_FILE XML, an
// `nvidia-smi topo -m` matrix or NCCL GRAPH debug lines, sniffed per file;
// or this node's PCIe tree under a sysfs root) and runs the rail check.
// No database. Exit as analyze: 0 no finding, 1 a warning, 2 a critical
// finding, 3 could not check (a file unreadable, not a topology, or
// malformed: the errors name file:line; also a usage error). A file that
// holds several nodes' dumps is checked per node, and what differs between
// them is a host_differs warning.
// ingest stores the file's wiring as host H's newest in cluster C (nothing
// when unchanged; of a file of several nodes, the one named H) and prints the fleet diff of C: the
// nodes wired unlike the majority. Exit as every storing command: 0 stored (whatever the diff
// says), 1 the file is not usable (nothing stored), 3 database.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "analyzer/topology/host_diff.h"
#include "analyzer/topology/rail_check.h"
#include "app/topology_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/parse/node_topology_parser.h"
#include "collector/readiness/pci_topology.h"
#include "core/node_topology_json.h"
#include "core/text.h"

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
  ParsedNodeTopology parsed;  // parsed.host: the node, when the file holds several
  std::vector<TopologyFinding> findings;
  std::string unreadable;  // why the file could not be read, or empty
};

// One verdict per node the file holds; with several, each also gets what
// differs between them (host_differs).
std::vector<FileVerdict> CheckFile(const std::string& path) {
  FileVerdict v;
  v.file = path;
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    v.unreadable = std::strerror(errno);
    return {v};
  }
  std::string text(static_cast<size_t>(kMaxFileBytes) + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  if (in.bad()) {
    v.unreadable = std::strerror(errno);
    return {v};
  }
  text.resize(static_cast<size_t>(in.gcount()));
  if (static_cast<std::streamsize>(text.size()) > kMaxFileBytes) {
    v.unreadable = "larger than 64 MiB: not a topology dump";
    return {v};
  }
  std::vector<FileVerdict> out;
  for (ParsedNodeTopology& p : ParseNodeTopologies(text, path)) {
    FileVerdict node;
    node.file = path;
    node.parsed = std::move(p);
    node.findings = CheckRails(node.parsed.topology);
    out.push_back(std::move(node));
  }
  if (out.size() > 1) {
    std::vector<std::pair<std::string, const NodeTopology*>> hosts;
    for (const FileVerdict& node : out) hosts.push_back({node.parsed.host, &node.parsed.topology});
    std::vector<std::vector<TopologyFinding>> differs = DiffHosts(hosts);
    for (size_t i = 0; i < out.size(); ++i) {
      out[i].findings.insert(out[i].findings.end(), differs[i].begin(), differs[i].end());
    }
  }
  return out;
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
          {"host", v.parsed.host.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.parsed.host)},
          {"format",
           v.parsed.format.empty() ? nlohmann::json(nullptr) : nlohmann::json(v.parsed.format)},
          {"gpus", TopologyGpusToJson(v.parsed.topology)},
          {"nics", TopologyNicsToJson(v.parsed.topology)},
          {"findings", TopologyFindingsToJson(v.findings)},
          {"errors", errors}};
}

void PrintText(const FileVerdict& v) {
  // An unreadable file has its one line on stderr (RunTopologyCheck).
  if (!v.unreadable.empty()) return;
  const NodeTopology& t = v.parsed.topology;
  std::cout << v.file;
  if (!v.parsed.host.empty()) std::cout << " [" << v.parsed.host << "]";
  std::cout << " (" << (v.parsed.format.empty() ? "unknown format" : v.parsed.format)
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
    for (FileVerdict& v : is_sysfs ? std::vector<FileVerdict>{CheckSysfs(file)} : CheckFile(file)) {
      if (!v.unreadable.empty()) {
        std::cerr << "fabtrack topology check: cannot read " << file << ": " << v.unreadable
                  << "\n";
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
  std::vector<FileVerdict> nodes =
      o.sysfs ? std::vector<FileVerdict>{CheckSysfs(*o.sysfs)} : CheckFile(o.file);
  if (nodes.size() > 1) {
    // A job's log or a post with several nodes: the one --host names. The
    // file's problems, whichever node they were found with, still count.
    std::vector<std::string> names;
    std::optional<size_t> match;
    for (size_t i = 0; i < nodes.size(); ++i) {
      names.push_back(nodes[i].parsed.host);
      if (nodes[i].parsed.host == o.host) match = i;
    }
    if (!match) {
      std::cerr << "fabtrack topology ingest: nothing stored: " << o.file << " holds "
                << nodes.size() << " nodes' dumps (" << Join(names, ", ") << "), none of them "
                << o.host << "\n";
      throw CommandExit{kExitInputError};
    }
    FileVerdict chosen = std::move(nodes[*match]);
    for (size_t i = 0; i < nodes.size(); ++i) {
      if (i == *match) continue;
      chosen.parsed.errors.insert(chosen.parsed.errors.end(), nodes[i].parsed.errors.begin(),
                                  nodes[i].parsed.errors.end());
    }
    nodes = {std::move(chosen)};
  }
  FileVerdict& v = nodes.front();
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
  // Nodes, not findings: one node with four GPUs on the wrong rail is one
  // node off the majority (its findings are listed below).
  std::set<std::string> odd_nodes;
  for (const TopologyFinding& f : r.fleet) odd_nodes.insert(f.host);
  std::cout << "fleet: " << r.hosts << " node(s) of " << o.cluster << ", " << odd_nodes.size()
            << " off the majority";
  if (r.fleet.size() != odd_nodes.size()) std::cout << " (" << r.fleet.size() << " findings)";
  std::cout << "\n";
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
