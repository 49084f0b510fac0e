#include "app/ingest_flow.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "app/batch_store.h"
#include "app/input_paths.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/parse_file.h"
#include "core/clock.h"
#include "core/content_hash.h"
#include "core/exit_code.h"
#include "core/interrupt.h"
#include "core/run_record_json.h"

namespace fabtrack::app {
namespace {
namespace fs = std::filesystem;

std::string ModifiedAtUtc(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return "now";
  return IsoFromSeconds(static_cast<double>(st.st_mtime), IsoStyle::kSeconds);
}

// A fabtrack-allreduce result file carries a whole run (latency samples and
// rank timings included): stored as recorded, with its own content hash, so
// a run the harness already stored directly is recognised. Returns nullopt
// when `content` is not such a file (or is a broken one: *error is set).
std::optional<RunRecord> HarnessRun(const std::string& content, const std::string& path,
                                    const IngestOptions& options, bool* error, std::ostream& err) {
  if (content.find(kRunFileFormat) == std::string::npos) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(content, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !IsRunFile(doc)) return std::nullopt;
  std::string why;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &why);
  if (!run) {
    err << path << ":1: fabtrack-allreduce result file: " << why << "\n"
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

// The --nccl-log files' evidence, merged. An unusable log stops the whole
// call, before anything is stored.
NcclLogInfo ReadExtraNcclLogs(const std::vector<std::string>& args, std::ostream& err) {
  NcclLogInfo extra_log;
  std::vector<std::string> nccl_logs;
  if (!ExpandInputPaths(args, /*walk_folders=*/true, &nccl_logs, err)) {
    err << "fabtrack ingest: --nccl-log: nothing stored\n";
    throw CommandExit{kExitInputError};
  }
  for (const std::string& path : nccl_logs) {
    ParsedFile log = ParsePath(path);
    for (const ParseError& e : log.errors) {
      err << path << ":" << e.line << ": warning: " << e.message << "\n";
    }
    if (log.log.info_lines == 0) {
      err << path << ":1: --nccl-log: no NCCL log lines found; nothing stored\n";
      throw CommandExit{kExitInputError};
    }
    MergeNcclLog(&extra_log, log.log);
  }
  return extra_log;
}

}  // namespace

PreparedIngest PrepareIngest(const IngestRequest& request, std::ostream& err) {
  const IngestOptions& options = request.options;
  const NcclLogInfo extra_log = ReadExtraNcclLogs(request.nccl_logs, err);
  PreparedIngest prepared;
  std::vector<std::string> paths;
  prepared.input_error = !ExpandInputPaths(request.paths, /*walk_folders=*/true, &paths, err);
  for (const std::string& path : paths) {
    errno = 0;
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      err << path << ": cannot read: " << (errno ? std::strerror(errno) : "cannot open") << "\n";
      prepared.input_error = true;
      continue;
    }
    std::string content((std::istreambuf_iterator<char>(in)), {});
    bool broken_run_file = false;
    if (std::optional<RunRecord> run = HarnessRun(content, path, options, &broken_run_file, err)) {
      prepared.files.push_back({path, {std::move(*run)}});
      continue;
    }
    if (broken_run_file) {
      prepared.input_error = true;
      continue;
    }
    ParsedFile parsed = ParseText(content, path);
    if (!parsed.tests.empty()) MergeNcclLog(&parsed.log, extra_log);
    for (const ParseError& e : parsed.errors) {
      err << path << ":" << e.line << ": " << (parsed.Usable() ? "warning: " : "") << e.message
          << "\n";
    }
    if (!parsed.Usable()) {
      if (parsed.errors.empty()) err << path << ":1: no nccl-tests table or NCCL log found\n";
      err << path << ": not stored\n";
      prepared.input_error = true;
      continue;
    }
    SourceFacts source{fs::absolute(path).lexically_normal().string(), Sha256Hex(content),
                       ModifiedAtUtc(path)};
    prepared.files.push_back({path, BuildRunRecords(parsed, source, options)});
  }
  return prepared;
}

void RunIngestFlow(const IngestRequest& request, const DatabaseChoice& choice,
                   const IngestedRun& on_stored, std::ostream& err) {
  // Parse everything first: bad input is reported before touching the database.
  const PreparedIngest prepared = PrepareIngest(request, err);
  if (prepared.files.empty()) throw CommandExit{kExitInputError};

  // When the database cannot take a file (unreachable, or lost mid-write),
  // that file and the rest are spooled and stored later: nothing collected
  // is lost to an outage.
  InstallInterruptHandlers();
  BatchStore database(choice, err);
  const std::vector<PreparedFile>& files = prepared.files;
  size_t stored_files = 0;
  for (size_t f = 0; f < files.size(); ++f) {
    const PreparedFile& file = files[f];
    if (int signal = InterruptSignal(); signal != 0) {
      err << "fabtrack ingest: interrupted: " << stored_files << " file(s) stored, "
          << files.size() - f << " not stored (from " << file.path << " on)\n";
      throw Interrupted(signal);
    }
    std::vector<store::SpoolBatch> batches(file.runs.size());
    for (size_t r = 0; r < file.runs.size(); ++r) batches[r].run = file.runs[r];
    StoreOutcome outcome;
    try {
      // One transaction per file: all of it or nothing.
      outcome = database.Store(std::move(batches), ThrowIfInterrupted);
    } catch (const Interrupted&) {
      err << "fabtrack ingest: interrupted: " << file.path
          << " not stored (its transaction rolled back, nothing of it kept); " << stored_files
          << " file(s) stored before it, " << files.size() - f - 1
          << " not started; run the same ingest again to store them\n";
      throw;
    } catch (const BatchRefused& e) {
      err << file.path << ": not stored: database refused it: " << e.what() << "\n";
      throw CommandExit{kExitDatabaseError};
    }
    if (!outcome.failure.empty()) err << file.path << ": not stored: " << outcome.failure << "\n";
    if (!outcome.stored) continue;
    ++stored_files;
    for (size_t r = 0; r < file.runs.size(); ++r) {
      on_stored(file.path, file.runs[r], outcome.applied[r]);
    }
  }
  // An outage is FinishSpooling's one warning line (how many, where, why).
  database.Finish();
  if (prepared.input_error) throw CommandExit{kExitInputError};
}

}  // namespace fabtrack::app
