// fabtrack ingest PATH... --cluster NAME [--at ISO8601] [--nodes N] [--tag k=v]...
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/batch_store.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "cli/input_paths.h"
#include "collector/ingest/run_builder.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/parse_file.h"
#include "core/clock.h"
#include "core/content_hash.h"
#include "core/interrupt.h"
#include "core/run_record_json.h"

namespace fabtrack::cli {
namespace {
namespace fs = std::filesystem;

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

std::string ModifiedAtUtc(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "now";
  return IsoFromSeconds(static_cast<double>(st.st_mtime), IsoStyle::kSeconds);
}

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

// A fabtrack-allreduce result file carries a whole run (latency samples and
// rank timings included): stored as recorded, with its own content hash, so
// a run the harness already stored directly is recognised. Returns nullopt
// when `content` is not such a file (or is a broken one: *error is set).
std::optional<RunRecord> HarnessRun(const std::string& content, const std::string& path,
                                    const IngestOptions& options, bool* error) {
  if (content.find(kRunFileFormat) == std::string::npos) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !IsRunFile(doc)) return std::nullopt;
  std::string why;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &why);
  if (!run) {
    std::cerr << path << ":1: fabtrack-allreduce result file: " << why << "\n"
              << path << ": not stored\n";
    *error = true;
    return std::nullopt;
  }
  run->cluster = options.cluster;
  for (const auto& [k, v] : options.tags) run->tags[k] = v;
  if (options.at) run->started_at = *options.at;
  if (options.nodes) run->nodes = options.nodes;
  run->source_file = fs::absolute(path).lexically_normal().string();
  return run;
}

void RunIngest(const IngestCommandOptions& o) {
  IngestOptions options;
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

  // Separate per-rank NCCL logs (NCCL_DEBUG_FILE) of the job(s) being ingested:
  // their evidence joins every results file of this call. An unusable log
  // stops the whole call, before anything is stored.
  NcclLogInfo extra_log;
  std::vector<std::string> nccl_logs;
  if (!ExpandInputPaths(o.nccl_logs, /*walk_folders=*/true, &nccl_logs)) {
    std::cerr << "fabtrack ingest: --nccl-log: nothing stored\n";
    throw CommandExit{kExitInputError};
  }
  for (const std::string& path : nccl_logs) {
    ParsedFile log = ParsePath(path);
    for (const ParseError& e : log.errors) {
      std::cerr << path << ":" << e.line << ": warning: " << e.message << "\n";
    }
    if (log.log.info_lines == 0) {
      std::cerr << path << ":1: --nccl-log: no NCCL log lines found; nothing stored\n";
      throw CommandExit{kExitInputError};
    }
    MergeNcclLog(&extra_log, log.log);
  }

  // Parse everything first: bad input is reported before touching the database.
  struct Prepared {
    std::string path;
    std::vector<RunRecord> runs;
  };
  std::vector<Prepared> prepared;
  std::vector<std::string> paths;
  bool input_error = !ExpandInputPaths(o.paths, /*walk_folders=*/true, &paths);
  for (const std::string& path : paths) {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      std::cerr << path << ": cannot read: " << (errno ? std::strerror(errno) : "cannot open")
                << "\n";
      input_error = true;
      continue;
    }
    std::string content((std::istreambuf_iterator<char>(in)), {});
    bool broken_run_file = false;
    if (std::optional<RunRecord> run = HarnessRun(content, path, options, &broken_run_file)) {
      prepared.push_back({path, {std::move(*run)}});
      continue;
    }
    if (broken_run_file) {
      input_error = true;
      continue;
    }
    ParsedFile parsed = ParseText(content, path);
    if (!parsed.tests.empty()) MergeNcclLog(&parsed.log, extra_log);
    for (const ParseError& e : parsed.errors) {
      std::cerr << path << ":" << e.line << ": " << (parsed.Usable() ? "warning: " : "")
                << e.message << "\n";
    }
    if (!parsed.Usable()) {
      if (parsed.errors.empty()) std::cerr << path << ":1: no nccl-tests table or NCCL log found\n";
      std::cerr << path << ": not stored\n";
      input_error = true;
      continue;
    }
    SourceFacts source{fs::absolute(path).lexically_normal().string(), Sha256Hex(content),
                       ModifiedAtUtc(path)};
    prepared.push_back({path, BuildRunRecords(parsed, source, options)});
  }
  if (prepared.empty()) throw CommandExit{kExitInputError};

  // When the database cannot take a file (unreachable, or lost mid-write),
  // that file and the rest are spooled and stored later: nothing collected
  // is lost to an outage.
  InstallInterruptHandlers();
  app::BatchStore database(o.database, std::cerr);
  size_t stored_files = 0;
  for (size_t f = 0; f < prepared.size(); ++f) {
    const Prepared& file = prepared[f];
    if (int signal = InterruptSignal(); signal != 0) {
      std::cerr << "fabtrack ingest: interrupted: " << stored_files << " file(s) stored, "
                << prepared.size() - f << " not stored (from " << file.path << " on)\n";
      throw Interrupted(signal);
    }
    std::vector<store::SpoolBatch> batches(file.runs.size());
    for (size_t r = 0; r < file.runs.size(); ++r) batches[r].run = file.runs[r];
    app::StoreOutcome outcome;
    try {
      // One transaction per file: all of it or nothing.
      outcome = database.Store(std::move(batches), ThrowIfInterrupted);
    } catch (const Interrupted&) {
      std::cerr << "fabtrack ingest: interrupted: " << file.path
                << " not stored (its transaction rolled back, nothing of it kept); " << stored_files
                << " file(s) stored before it, " << prepared.size() - f - 1
                << " not started; run the same ingest again to store them\n";
      throw;
    } catch (const app::BatchRefused& e) {
      std::cerr << file.path << ": not stored: database refused it: " << e.what() << "\n";
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty())
      std::cerr << file.path << ": not stored: " << outcome.failure << "\n";
    if (!outcome.stored) continue;
    ++stored_files;
    for (size_t r = 0; r < file.runs.size(); ++r) {
      const store::AppliedBatch& result = outcome.applied[r];
      std::cout << file.path << ": " << (result.inserted ? "stored run " : "already stored as run ")
                << result.run_id << " (" << Describe(file.runs[r]) << ")"
                << (!result.inserted && !o.nccl_logs.empty()
                        ? "; the --nccl-log evidence was not added to it"
                        : "")
                << "\n";
    }
  }
  // An outage is FinishSpooling's one warning line (how many, where, why).
  database.Finish();
  if (input_error) throw CommandExit{kExitInputError};
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
