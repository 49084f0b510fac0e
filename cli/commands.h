// One Setup<Command>(CLI::App&) per subcommand; each registers its options and
// a callback that runs it. Exit codes are shared so cron jobs can act on them.
#pragma once

#include <CLI/CLI.hpp>

#include "core/clock.h"
#include "core/exit_code.h"

namespace fabtrack {
struct HwCounterSelection;  // collector/counters/hw_counter_selection.h
}  // namespace fabtrack

namespace fabtrack::cli {

// Exit codes and CommandExit are core/exit_code.h (the flows in app/ end
// commands with them too).
using fabtrack::CommandExit;
using fabtrack::ExitCode;

// Arguments after a standalone "--" on the command line (main() cuts them off
// before CLI11 parses): `fabtrack sweep ... -- -b 8 -e 1G` hands them to
// fabtrack-allreduce untouched.
const std::vector<std::string>& PassthroughArgs();
void SetPassthroughArgs(std::vector<std::string> args);

// `--format` with its choices, the first the default: "text (default), json
// or html". One declaration for every command that prints more than one way.
CLI::Option* AddFormatOption(CLI::App* app, std::string* format,
                             const std::vector<std::string>& choices);

// Whole-number options and ids, checked as typed, before CLI11 converts
// them: "must be at least 1, got 0", "99999999999999999999 is out of range
// (at most 9223372036854775807)", "expected a whole number, got abc". (CLI11's
// PositiveNumber names a 300-digit bound, and an id past int64 saturated
// silently into another id.) CLI11 puts the option's name in front.
CLI::Validator WholeNumber(int64_t min, int64_t max);
// A count (--nodes, --limit, --count): an int, at least 1.
CLI::Validator PositiveCount();
// A database id (runs, comparisons): an int64, at least 1.
CLI::Validator StoredId();
// Seconds, Gb/s: a finite number above 0 ("must be more than 0, got 0").
CLI::Validator PositiveAmount();

// The check of an option that takes a time (--at, --since, --until), as a
// transform: core/clock.h's ParseOperatorTime while the command line is
// parsed, before anything runs; the value becomes its RFC 3339 UTC form, and
// a bad one is a usage error naming the option and the value. `allow_future`
// (the command's --allow-future flag) lifts rules.refuse_far_future.
CLI::Validator OperatorTimeValue(OperatorTimeRules rules,
                                 const CLI::Option* allow_future = nullptr);

// The check of an option that takes a name (--cluster, --host, --job...):
// an empty or blank one, or one with spaces around it, is a usage error
// naming the option while the command line is parsed (never a row without a
// name, nor the database's check-constraint error).
CLI::Validator NameValue();

// `--hw-counters all|none|NAME[,NAME...]` (default all): which driver
// hw_counters/ files a command that reads the ports reads. A malformed value
// is a usage error naming the option.
CLI::Option* AddHwCountersOption(CLI::App* app, HwCounterSelection* selection);
// One line on stderr when listed names are on no port under `sysfs` (with
// the names the ports do have); they are read wherever they appear.
void WarnMissingHwCounters(std::string_view command, const std::string& sysfs,
                           const HwCounterSelection& selection);

void SetupDb(CLI::App& app);
void SetupParse(CLI::App& app);
void SetupIngest(CLI::App& app);
void SetupRuns(CLI::App& app);
void SetupSweep(CLI::App& app);
void SetupCounters(CLI::App& app);
void SetupAnalyze(CLI::App& app);
void SetupSpool(CLI::App& app);
void SetupInspector(CLI::App& app);
void SetupCheck(CLI::App& app);
void SetupImport(CLI::App& app);
void SetupLocate(CLI::App& app);
void SetupAck(CLI::App& app);
void SetupDiff(CLI::App& app);
void SetupTopology(CLI::App& app);
void SetupFabric(CLI::App& app);
void SetupRas(CLI::App& app);
// `ras read`, under SetupRas's `ras` (cli/ras_read_command.cc).
void SetupRasRead(CLI::App* ras);

}  // namespace fabtrack::cli
