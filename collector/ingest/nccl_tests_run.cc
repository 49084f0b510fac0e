#include "collector/ingest/nccl_tests_run.h"

#include <algorithm>

#include "collector/ingest/run_builder.h"
#include "collector/parse/parse_file.h"
#include "core/content_hash.h"

namespace fabtrack {
namespace {

std::string At(const std::string& path, int line, const std::string& message) {
  return path + ":" + std::to_string(std::max(line, 1)) + ": " + message;
}

// nccl-tests -N prints every cycle's rows in one table: the sizes start
// again. The last cycle is kept (as fabtrack-allreduce -N stores it); the
// number of cycles seen is returned.
int KeepLastCycle(TestTable* table) {
  int cycles = 1;
  size_t last_start = 0;
  for (size_t i = 1; i < table->rows.size(); ++i) {
    if (table->rows[i].size_bytes <= table->rows[i - 1].size_bytes) {
      ++cycles;
      last_start = i;
    }
  }
  if (cycles > 1) {
    table->rows.erase(table->rows.begin(),
                      table->rows.begin() + static_cast<ptrdiff_t>(last_start));
  }
  return cycles;
}

}  // namespace

NcclTestsRuns BuildNcclTestsRuns(const NcclTestsLaunch& launch) {
  NcclTestsRuns out;
  ParsedFile parsed = ParseText(launch.transcript, launch.transcript_path);
  for (const ParseError& e : parsed.errors) {
    out.problems.push_back(At(launch.transcript_path, e.line, "warning: " + e.message));
  }
  if (launch.json && launch.json_path) {
    ParsedFile report = ParseText(*launch.json, *launch.json_path);
    if (!report.tests.empty() && report.tests.front().complete) {
      // The report does not say which nccl-tests wrote it; the printed
      // header of the same table does.
      for (size_t i = 0; i < report.tests.size() && i < parsed.tests.size(); ++i) {
        TestTable& json_table = report.tests[i];
        const TestTable& printed = parsed.tests[i];
        if (!json_table.nccl_tests_version)
          json_table.nccl_tests_version = printed.nccl_tests_version;
        if (!json_table.nccl_version_code) json_table.nccl_version_code = printed.nccl_version_code;
        if (json_table.devices.empty()) json_table.devices = printed.devices;
        if (json_table.hosts.empty()) json_table.hosts = printed.hosts;
      }
      parsed.tests = std::move(report.tests);
    } else {
      const std::string why = report.errors.empty() ? "no result table" : report.errors[0].message;
      const int line = report.errors.empty() ? 1 : report.errors[0].line;
      out.problems.push_back(
          At(*launch.json_path, line,
             "warning: -J report not usable (" + why + "); the printed table is stored instead"));
    }
  }
  const std::string exit_note = " (exit " + std::to_string(launch.exit_code) + ")";
  if (!parsed.Usable()) {
    out.problems.push_back(At(launch.transcript_path, 1,
                              "nccl-tests printed neither a result table nor NCCL log lines" +
                                  exit_note + "; nothing stored"));
    return out;
  }
  for (const TestTable& t : parsed.tests) {
    if (t.ranks && *t.ranks != launch.expected_ranks) {
      out.problems.push_back(
          At(launch.transcript_path, t.first_line,
             "the table has " + std::to_string(*t.ranks) + " rank(s) where the sweep launched " +
                 std::to_string(launch.expected_ranks) +
                 " (a program built without MPI=1 runs one job per process); nothing stored"));
      return out;
    }
    if (t.collective && *t.collective != launch.collective) {
      out.problems.push_back(At(launch.transcript_path, t.first_line,
                                "the table is " + *t.collective + ", the program " +
                                    launch.collective + "; nothing stored"));
      return out;
    }
  }
  std::vector<int> cycles;
  for (TestTable& t : parsed.tests) cycles.push_back(KeepLastCycle(&t));
  SourceFacts source{launch.transcript_path,
                     Sha256Hex(launch.transcript + launch.json.value_or("")), launch.launched_at};
  IngestOptions options;
  options.cluster = launch.cluster;
  options.at = launch.launched_at;
  options.nodes = launch.nodes;
  options.tags = launch.tags;
  out.runs = BuildRunRecords(parsed, source, options);
  for (size_t i = 0; i < out.runs.size(); ++i) {
    RunRecord& run = out.runs[i];
    if (run.source != "nccl-log" && i < cycles.size() && cycles[i] > 1) {
      run.parameters["cycles"] = std::to_string(cycles[i]);
    }
    run.collective = launch.collective;
    run.sweep_id = launch.sweep_id;
    // As launched (launcher included); the report's args lack the launcher.
    run.command_line = launch.command_line;
    if (run.source == "nccl-log") {
      // The benchmark ran (its NCCL log says so) but printed no table.
      run.status = RunStatus::kFailed;
      out.problems.push_back(At(launch.transcript_path, 1,
                                "nccl-tests printed no result table" + exit_note +
                                    ": stored as a failed run with its NCCL log"));
    } else if (launch.exit_code != 0 && run.status == RunStatus::kComplete) {
      // nccl-tests exits non-zero when a size had #wrong > 0 or the check
      // failed, even where the trailer reads OK.
      run.status = RunStatus::kFailed;
      out.problems.push_back(At(launch.transcript_path, 1,
                                "nccl-tests failed" + exit_note + ": the run is stored as failed"));
    }
  }
  return out;
}

}  // namespace fabtrack
