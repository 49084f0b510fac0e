// fabtrack ack PROBLEM --cluster NAME --until DATE --note TEXT: silences a
// known problem (the id `fabtrack analyze` prints) until a date. It stays
// listed, acknowledged, with the note; it stops counting in the exit status
// and stops alerting. The ack is kept (who, when, why).
#include <iostream>

#include "app/analysis_session.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "core/clock.h"

namespace fabtrack::cli {
namespace {

struct AckOptions {
  std::string problem;
  std::string cluster;
  std::string until;
  std::string note;
  DatabaseOptions database;
};

void RunAck(const AckOptions& o) {
  if (o.note.empty()) {
    std::cerr << "fabtrack ack: --note: say why (a ticket, an RMA): the next person asks\n";
    throw CommandExit{kExitUsage};
  }
  app::AnalysisSession session(o.database, std::cerr);
  try {
    session.Ack(o.cluster, o.problem, o.until, o.note);
  } catch (const app::UnknownProblem& e) {
    std::cerr << "fabtrack ack: " << e.what() << "\n";
    throw CommandExit{kExitInputError};
  } catch (const app::AnalysisUnavailable& e) {
    std::cerr << "fabtrack ack: " << e.what() << "\n";
    throw CommandExit{kExitDatabaseError};
  }
  std::cout << "problem " << o.problem << " of " << o.cluster << " acknowledged until " << o.until
            << "\n";
}

}  // namespace

void SetupAck(CLI::App& app) {
  auto o = std::make_shared<AckOptions>();
  CLI::App* ack = app.add_subcommand(
      "ack", "Silence a known problem until a date (it stays listed, acknowledged)");
  ack->add_option("problem", o->problem, "the problem's id, as `fabtrack analyze` prints it")
      ->required();
  ack->add_option("--cluster", o->cluster, "cluster name")->check(NameValue())->required();
  // A date is the whole of that day: `--until 2026-12-31` silences through
  // the 31st (until 2026-12-31T23:59:59Z).
  OperatorTimeRules until;
  until.date_means_end_of_day = true;
  until.refuse_past = true;
  ack->add_option("--until", o->until,
                  "silenced until this time (RFC 3339), or through this date (2026-12-31: to its "
                  "end, 23:59:59 UTC)")
      ->required()
      ->transform(OperatorTimeValue(until));
  ack->add_option("--note", o->note, "why: a ticket, an RMA, who is on it")->required();
  AddDatabaseOptions(ack, &o->database);
  ack->callback([o] { RunAck(*o); });
}

}  // namespace fabtrack::cli
