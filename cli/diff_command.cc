// fabtrack diff RUN_A RUN_B [--format text|json]: what differs between two
// stored runs — versions, NCCL settings, network, hosts, flags — and what the
// numbers did (busbw at the largest common size, time at the smallest). The
// question after every regression: what changed between the last good night
// and the first bad one?
#include <iostream>

#include "analyzer/run_diff.h"
#include "app/database_admin.h"
#include "app/run_catalog.h"
#include "cli/commands.h"
#include "cli/database_options.h"

namespace fabtrack::cli {
namespace {

struct DiffOptions {
  int64_t a = 0, b = 0;
  std::string format = "text";
  DatabaseOptions database;
};

nlohmann::json Read(const DiffOptions& o, int64_t id) {
  std::optional<nlohmann::json> detail = app::ReadRunDetail(o.database, id, std::cerr);
  if (!detail) {
    std::cerr << "fabtrack diff: no run " << id << " in " << app::DescribeTarget(o.database)
              << " (`fabtrack runs list` shows the stored ones)\n";
    throw CommandExit{kExitInputError};
  }
  return *detail;
}

void RunDiff(const DiffOptions& o) {
  const nlohmann::json a = Read(o, o.a), b = Read(o, o.b);
  const analyzer::RunDiff diff = analyzer::DiffRuns(a, b);
  if (o.format == "json") {
    std::cout << analyzer::RunDiffJson(a, b, diff)
                     .dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
              << "\n";
  } else {
    std::cout << analyzer::RunDiffText(a, b, diff);
  }
}

}  // namespace

void SetupDiff(CLI::App& app) {
  auto o = std::make_shared<DiffOptions>();
  CLI::App* diff = app.add_subcommand(
      "diff", "What differs between two stored runs: versions, settings, hosts, numbers");
  diff->add_option("run_a", o->a, "the earlier (good) run's id")->required()->check(StoredId());
  diff->add_option("run_b", o->b, "the later (bad) run's id")->required()->check(StoredId());
  AddFormatOption(diff, &o->format, {"text", "json"});
  AddDatabaseOptions(diff, &o->database);
  diff->callback([o] { RunDiff(*o); });
}

}  // namespace fabtrack::cli
