// fabtrack inspector ingest PATH... --cluster NAME [--job ID]
// fabtrack inspector summary PATH... [--format text|json]
// A real training job's collectives from NCCL's Inspector plugin (a dump
// directory or its files: <host>-pid<pid>.log JSON lines, or the
// nccl_inspector_metrics_<uuid>.prom textfiles).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "app/run_catalog.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "collector/ingest/inspector_job.h"
#include "collector/parse/inspector_parser.h"
#include "core/json_instances.h"
#include "core/text.h"

namespace fabtrack::cli {
namespace {
namespace fs = std::filesystem;

struct InspectorOptions {
  std::vector<std::string> paths;
  std::string cluster;
  std::optional<std::string> job;
  std::string format = "text";
  DatabaseOptions database;
};

bool IsInspectorFile(const fs::path& p) {
  const std::string ext = p.extension().string();
  return ext == ".log" || ext == ".jsonl" || ext == ".prom";
}

// Every record under the paths, or exit 1 naming each bad file:line (nothing
// is stored from a job with unreadable parts). A truncated last line is the
// writer still at work: reported, the records before it kept.
std::vector<InspectorRecord> ReadAll(const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      for (const auto& entry : fs::recursive_directory_iterator(p, ec)) {
        if (entry.is_regular_file() && IsInspectorFile(entry.path())) {
          files.push_back(entry.path().string());
        }
      }
    } else {
      files.push_back(p);
    }
  }
  std::sort(files.begin(), files.end());
  if (files.empty()) {
    std::cerr << "fabtrack inspector: no Inspector files (*.log, *.jsonl, *.prom) under the "
                 "given paths\n";
    throw CommandExit{kExitInputError};
  }
  std::vector<InspectorRecord> records;
  bool bad = false;
  for (const std::string& file : files) {
    std::ifstream in(file, std::ios::binary);
    if (!in) {
      std::cerr << file << ": cannot read\n";
      bad = true;
      continue;
    }
    std::ostringstream text;
    text << in.rdbuf();
    InspectorParseResult parsed = ParseInspectorFile(text.str(), file);
    for (const InspectorError& e : parsed.errors) {
      std::cerr << e.ToString()
                << (parsed.truncated && &e == &parsed.errors.back() && parsed.errors.size() == 1
                        ? " (truncated: the records before it are kept)"
                        : "")
                << "\n";
    }
    if (!parsed.errors.empty() && !(parsed.truncated && parsed.errors.size() == 1)) bad = true;
    records.insert(records.end(), std::make_move_iterator(parsed.records.begin()),
                   std::make_move_iterator(parsed.records.end()));
  }
  if (bad) {
    std::cerr << "fabtrack inspector: nothing stored (fix or remove the files named above)\n";
    throw CommandExit{kExitInputError};
  }
  return records;
}

void PrintSummary(const InspectorJob& job, const std::string& format) {
  if (format == "json") {
    nlohmann::json groups = nlohmann::json::array();
    for (const InspectorCollective& c : job.collectives) {
      groups.push_back(
          {{"communicator", c.communicator},
           {"collective", c.collective},
           {"message_bytes", c.message_bytes},
           {"count", c.count},
           {"median_us", c.median_us},
           {"p90_us", c.p90_us},
           {"max_us", c.max_us},
           {"median_busbw_gbps",
            c.median_busbw_gbps ? nlohmann::json(*c.median_busbw_gbps) : nlohmann::json(nullptr)},
           {"slowest_rank",
            c.slowest_rank ? nlohmann::json(*c.slowest_rank) : nlohmann::json(nullptr)},
           {"slowest_host",
            c.slowest_host ? nlohmann::json(*c.slowest_host) : nlohmann::json(nullptr)},
           {"slowest_host_ratio", c.slowest_host_ratio ? nlohmann::json(*c.slowest_host_ratio)
                                                       : nlohmann::json(nullptr)}});
    }
    std::cout << nlohmann::json{{"job_id", job.job_id},
                                {"records", job.records},
                                {"nnodes", job.nnodes ? nlohmann::json(*job.nnodes) : nullptr},
                                {"nranks", job.nranks ? nlohmann::json(*job.nranks) : nullptr},
                                {"hosts", job.hosts},
                                {"collectives", groups}}
                     .dump(2)
              << "\n";
    return;
  }
  std::cout << "job " << job.job_id << ": " << job.records << " records, " << job.nranks.value_or(0)
            << " ranks on " << job.nnodes.value_or(0) << " nodes\n";
  std::cout << "  collective       size (B)   count   p50 (us)   p90 (us)  busbw (GB/s)  slowest\n";
  for (const InspectorCollective& c : job.collectives) {
    char line[256];
    std::snprintf(line, sizeof line, "  %-14s %10lld %7lld %10s %10s %13s  ", c.collective.c_str(),
                  static_cast<long long>(c.message_bytes), static_cast<long long>(c.count),
                  FormatFixed(c.median_us, 1).c_str(), FormatFixed(c.p90_us, 1).c_str(),
                  c.median_busbw_gbps ? FormatFixed(*c.median_busbw_gbps, 2).c_str() : "-");
    std::cout << line;
    if (c.slowest_host) {
      std::cout << *c.slowest_host << " " << FormatFixed(c.slowest_host_ratio.value_or(0), 2)
                << "x";
    }
    std::cout << "\n";
  }
}

void RunSummary(const InspectorOptions& o) {
  std::vector<InspectorRecord> records = ReadAll(o.paths);
  PrintSummary(BuildInspectorJob(records, InspectorJobId(records, o.paths.front(), o.job)),
               o.format);
}

void RunIngest(const InspectorOptions& o) {
  std::vector<InspectorRecord> records = ReadAll(o.paths);
  InspectorJob job = BuildInspectorJob(records, InspectorJobId(records, o.paths.front(), o.job));
  try {
    bool stored = app::StoreInspectorJob(o.database, o.cluster, job, o.paths.front(), std::cerr);
    if (stored) {
      std::cerr << "fabtrack inspector: stored job " << job.job_id << " (" << job.records
                << " records in " << job.collectives.size() << " collective/size groups, "
                << job.nranks.value_or(0) << " ranks on " << job.nnodes.value_or(0) << " nodes)\n";
    } else {
      std::cerr << "fabtrack inspector: job " << job.job_id << " is already stored in cluster "
                << o.cluster << "; nothing changed\n";
    }
  } catch (const std::exception& e) {
    // The files stay where they are: rerunning stores the job once.
    std::cerr << "fabtrack inspector: could not store job " << job.job_id << ": " << e.what()
              << "\n";
    throw CommandExit{kExitDatabaseError};
  }
}

}  // namespace

void SetupInspector(CLI::App& app) {
  CLI::App* inspector = app.add_subcommand(
      "inspector", "Real training jobs' collectives from NCCL's Inspector profiler plugin");
  inspector->require_subcommand(1);

  auto in = std::make_shared<InspectorOptions>();
  CLI::App* ingest =
      inspector->add_subcommand("ingest", "Store a job's Inspector output (summarized)");
  ingest->add_option("paths", in->paths, "dump directory or files")->required();
  ingest->add_option("--cluster", in->cluster, "cluster the job ran on")
      ->check(NameValue())
      ->required();
  ingest->add_option("--job", in->job, "job id (default: slurm_job_id, or the dump directory)")
      ->check(NameValue());
  AddDatabaseOptions(ingest, &in->database);
  ingest->callback([in] { RunIngest(*in); });

  auto sum = std::make_shared<InspectorOptions>();
  CLI::App* summary = inspector->add_subcommand(
      "summary", "Print a job's collectives per size with the slowest host, without storing");
  summary->add_option("paths", sum->paths, "dump directory or files")->required();
  summary->add_option("--job", sum->job, "job id to show")->check(NameValue());
  AddFormatOption(summary, &sum->format, {"text", "json"});
  summary->callback([sum] { RunSummary(*sum); });
}

}  // namespace fabtrack::cli
