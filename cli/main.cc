// fabtrack: keeps watch over the network fabric of GPU training clusters.
#include <iostream>

#include "cli/commands.h"

int main(int argc, char** argv) {
  using namespace fabtrack::cli;
  CLI::App app{
      "fabtrack: all-reduce benchmarks, NCCL transports and port counters into PostgreSQL"};
  app.set_version_flag("--version", std::string("fabtrack ") + FABTRACK_VERSION);
  app.require_subcommand(1);
  SetupDb(app);
  SetupParse(app);
  SetupIngest(app);
  SetupRuns(app);
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
    return kExitUsage;
  } catch (const CommandExit& e) {
    return e.code;
  } catch (const std::exception& e) {
    std::cerr << "fabtrack: " << e.what() << "\n";
    return kExitInternal;
  }
  return kExitOk;
}
