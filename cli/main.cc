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

namespace {

// "runs", "show": the subcommands CLI11 had reached, outermost first.
std::vector<CLI::App*> ParsedChain(CLI::App& app) {
  std::vector<CLI::App*> chain = {&app};
  while (!chain.back()->get_subcommands().empty()) {
    chain.push_back(chain.back()->get_subcommands().front());
  }
  return chain;
}

std::vector<std::string> SubcommandNames(CLI::App* app) {
  std::vector<std::string> names;
  for (const CLI::App* sub : app->get_subcommands([](CLI::App*) { return true; })) {
    names.push_back(sub->get_name());
  }
  return names;
}

std::string JoinNames(const std::vector<std::string>& names) {
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

// What was wrong, in one line that starts with the command as typed: every
// command's usage errors alike. A word CLI11 could not place is the cause of
// whatever it said next (`ingest f --clusterr lab` is "--cluster is
// required", `runs lst` "A subcommand is required"), so it is named first.
std::string DescribeUsageError(CLI::App& app, const CLI::ParseError& e) {
  const std::vector<CLI::App*> chain = ParsedChain(app);
  std::string command = "fabtrack";
  for (size_t i = 1; i < chain.size(); ++i) command += " " + chain[i]->get_name();
  const std::string help = " (" + command + " --help)";
  for (CLI::App* level : chain) {
    for (const std::string& word : level->remaining()) {
      if (word.size() > 1 && word[0] == '-') {
        const std::string name = word.substr(0, word.find('='));
        std::vector<std::string> options;
        for (CLI::App* a : chain) {
          for (const CLI::Option* o : a->get_options()) {
            for (const std::string& long_name : o->get_lnames())
              options.push_back("--" + long_name);
          }
        }
        if (level != chain.back() &&
            std::find(options.begin(), options.end(), name) != options.end()) {
          return command + ": " + name + " goes after the command's name (" + command + " " + name +
                 " ...)";
        }
        std::string line = command + ": unknown option " + name;
        if (std::string near = NearestName(name, options); !near.empty()) {
          line += "; did you mean " + near + "?";
        }
        return line + help;
      }
      // A word where a subcommand belongs (the last command reached has
      // subcommands and none was given).
      const std::vector<std::string> names = SubcommandNames(chain.back());
      if (level == chain.back() && !names.empty()) {
        std::string line = command + ": unknown command '" + word + "'";
        if (std::string near = NearestName(word, names); !near.empty()) {
          line += "; did you mean '" + near + "'?";
        }
        return line + " (" +
               (chain.size() == 1 ? "fabtrack --help lists the commands)"
                                  : "one of: " + JoinNames(names) + ")");
      }
    }
  }
  if (std::string(e.what()) == "A subcommand is required") {
    return command +
           ": a subcommand is required, one of: " + JoinNames(SubcommandNames(chain.back())) + help;
  }
  return command + ": " + e.what() + help;
}

}  // namespace
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
  SetupFabric(app);
  SetupRas(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << DescribeUsageError(app, e) << "\n";
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
