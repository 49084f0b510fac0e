// fabtrack: keeps watch over the network fabric of GPU training clusters.
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
}  // namespace fabtrack::cli

int main(int argc, char** argv) {
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
