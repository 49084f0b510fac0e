// fabtrack ingest PATH... --cluster NAME [--at ISO8601] [--nodes N] [--tag k=v]...
#include <iostream>
#include <sstream>

#include "app/ingest_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "core/run_record.h"

namespace fabtrack::cli {
namespace {

struct IngestCommandOptions {
  std::vector<std::string> paths;
  std::string cluster;
  std::optional<std::string> at;
  bool allow_future = false;
  std::optional<int> nodes;
  std::vector<std::string> tags;
  std::vector<std::string> nccl_logs;
  DatabaseOptions database;
};

std::string Describe(const RunRecord& r) {
  std::ostringstream s;
  s << r.source;
  if (r.collective) s << " " << *r.collective;
  if (r.dtype) s << " " << *r.dtype;
  if (r.nodes) s << ", " << *r.nodes << " node" << (*r.nodes == 1 ? "" : "s");
  if (r.ranks) s << ", " << *r.ranks << " ranks";
  s << ", " << r.results.size() << " sizes";
  if (r.network) s << ", network " << *r.network;
  if (!r.transports.empty()) {
    s << ", via";
    for (const auto& t : r.transports) s << " " << t;
  }
  if (r.status != RunStatus::kComplete) s << " [" << RunStatusName(r.status) << "]";
  return s.str();
}

void RunIngest(const IngestCommandOptions& o) {
  app::IngestRequest request;
  request.paths = o.paths;
  request.nccl_logs = o.nccl_logs;
  IngestOptions& options = request.options;
  options.cluster = o.cluster;
  options.nodes = o.nodes;
  options.at = o.at;  // checked while parsing (OperatorTimeValue)
  for (const auto& tag : o.tags) {
    auto eq = tag.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "fabtrack ingest: --tag " << tag << ": expected key=value\n";
      throw CommandExit{kExitUsage};
    }
    options.tags[tag.substr(0, eq)] = tag.substr(eq + 1);
  }
  auto print_stored = [&](const std::string& path, const RunRecord& run,
                          const store::AppliedBatch& applied) {
    std::cout << path << ": " << (applied.inserted ? "stored run " : "already stored as run ")
              << applied.run_id << " (" << Describe(run) << ")"
              << (!applied.inserted && !o.nccl_logs.empty()
                      ? "; the --nccl-log evidence was not added to it"
                      : "")
              << "\n";
  };
  app::RunIngestFlow(request, o.database, print_stored, std::cerr);
}

}  // namespace

void SetupIngest(CLI::App& app) {
  auto o = std::make_shared<IngestCommandOptions>();
  CLI::App* ingest =
      app.add_subcommand("ingest", "Parse nccl-tests outputs and NCCL logs and store them as runs");
  ingest->add_option("paths", o->paths, "files or directories")->required();
  ingest->add_option("--cluster", o->cluster, "cluster name")->check(NameValue())->required();
  CLI::Option* allow_future = ingest->add_flag("--allow-future", o->allow_future,
                                               "take an --at more than a day ahead of this clock");
  OperatorTimeRules when_it_happened;
  when_it_happened.refuse_far_future = true;
  ingest
      ->add_option("--at", o->at, "when the run happened (RFC 3339 or a date; default: file mtime)")
      ->transform(OperatorTimeValue(when_it_happened, allow_future));
  ingest->add_option("--nodes", o->nodes, "node count (default: distinct hosts)")
      ->check(PositiveCount());
  ingest->add_option("--tag", o->tags, "free tag key=value (repeatable)");
  ingest->add_option("--nccl-log", o->nccl_logs,
                     "NCCL_DEBUG=INFO log file or folder of the same job (per-rank files); its "
                     "transport evidence is attached to the runs (repeatable)");
  AddDatabaseOptions(ingest, &o->database);
  ingest->callback([o] { RunIngest(*o); });
}

}  // namespace fabtrack::cli
