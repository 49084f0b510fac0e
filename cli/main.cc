// fabtrack: keeps watch over the network fabric of GPU training clusters.
#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "core/interrupt.h"

namespace fabtrack::cli {
namespace {
std::vector<std::string>* passthrough = new std::vector<std::string>();
}  // namespace
const std::vector<std::string>& PassthroughArgs() { return *passthrough; }
void SetPassthroughArgs(std::vector<std::string> args) { *passthrough = std::move(args); }

// The closest of `names` to a mistyped `word` (edit distance at most 2, or a
// prefix), or "".
std::string NearestName(const std::string& word, const std::vector<std::string>& names) {
  std::string best;
  size_t best_distance = 3;
  for (const std::string& name : names) {
    if (name.rfind(word, 0) == 0 && word.size() >= 2) return name;
    std::vector<size_t> row(name.size() + 1);
    for (size_t j = 0; j <= name.size(); ++j) row[j] = j;
    for (size_t i = 1; i <= word.size(); ++i) {
      size_t diagonal = row[0];
      row[0] = i;
      for (size_t j = 1; j <= name.size(); ++j) {
        const size_t up = row[j];
        row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (word[i - 1] != name[j - 1])});
        diagonal = up;
      }
    }
    if (row[name.size()] < best_distance) {
      best_distance = row[name.size()];
      best = name;
    }
  }
  return best;
}
}  // namespace fabtrack::cli

int main(int argc, char** argv) {
  using namespace fabtrack;
  using namespace fabtrack::cli;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--") {
      SetPassthroughArgs(std::vector<std::string>(argv + i + 1, argv + argc));
      argc = i;
      break;
    }
  }
  CLI::App app{
      "fabtrack: all-reduce benchmarks, NCCL transports and port counters into PostgreSQL"};
  app.set_version_flag("--version", std::string("fabtrack ") + FABTRACK_VERSION);
  app.require_subcommand(1);
  SetupDb(app);
  SetupParse(app);
  SetupIngest(app);
  SetupRuns(app);
  SetupSweep(app);
  SetupCounters(app);
  SetupAnalyze(app);
  SetupSpool(app);
  SetupInspector(app);
  SetupCheck(app);
  SetupImport(app);
  SetupLocate(app);
  SetupAck(app);
  SetupDiff(app);
  SetupTopology(app);
  // An unknown command would otherwise be "A subcommand is required".
  if (argc > 1 && argv[1][0] != '-') {
    std::vector<std::string> names;
    for (const CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) {
      names.push_back(sub->get_name());
    }
    if (std::find(names.begin(), names.end(), argv[1]) == names.end()) {
      std::cerr << "fabtrack: unknown command '" << argv[1] << "'";
      if (std::string near = NearestName(argv[1], names); !near.empty()) {
        std::cerr << "; did you mean '" << near << "'?";
      }
      std::cerr << " (fabtrack --help lists the commands)\n";
      return kExitUsage;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    // analyze and check speak the monitoring-plugin convention, where 2 means
    // critical: a usage error there is "could not analyze" (3).
    if (argc > 1 && (std::string(argv[1]) == "analyze" || std::string(argv[1]) == "check"))
      return 3;
    if (argc > 2 && std::string(argv[1]) == "topology" && std::string(argv[2]) == "check") return 3;
    return kExitUsage;
  } catch (const CommandExit& e) {
    return e.code;
  } catch (const fabtrack::Interrupted& e) {
    std::cerr << "fabtrack: " << e.what() << "\n";
    return e.exit_code();
  } catch (const std::exception& e) {
    std::cerr << "fabtrack: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitOk;
}
