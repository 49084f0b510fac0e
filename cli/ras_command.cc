// fabtrack ras status [--host H] [--port 28028] [--timeout S]
//                     [--format text|json] [--verbose]
// Asks an NCCL job's RAS thread (NCCL >= 2.24) for VERBOSE STATUS, in JSON
// where the library offers it (2.28.7+: every rank's collective counts, so
// ranks behind are named however many they are) and the text report
// otherwise, and says which communicators and ranks are dead, missing or
// behind, by node IP, GPU and pid. Nothing is stored (a watch over time is
// `ras watch`'s job, not this command's).
// Exit 0 healthy, 1 warning (mismatch, ranks behind, timeouts), 2 critical
// (dead, missing, errors), 3 no whole answer (nothing listens, the peer
// stalled past --timeout, the reply passed the size cap or could not be read).
//
// fabtrack ras watch --every S --job ID [--cluster C] [--count N | --until-done]
//                    [--max-duration S] [--hosts-file F] [--no-resolve]
//                    [--host H] [--port P] [--timeout S] [--format text|json]
//                    [--no-monitor]
// A snapshot every S seconds, stored with the job; the verdict over them
// (stuck communicators, laggards, dead ranks by host, GPU and pid, with the
// port counters of their hosts over the window), stored as the job's; the
// first watch to find a job stuck says so ("alert: new"), later ones do not.
// Where RAS streams events (NCCL >= 2.29, MONITOR) the watch reads them
// between the snapshots and stores them; a process declared dead (PEER_DEAD)
// ends it at once, named, and is alerted once per job like a stuck one.
// While the database is away (an outage) the watch goes on: what it takes is
// spooled, the database tried again once a minute and before the verdict;
// still away then, the verdict is made from this watch alone ("alert:
// unconfirmed").
// Exit 0/1/2 as status, 3 no verdict (no snapshot, the hosts file unreadable,
// the database misconfigured).
#include <cstdlib>
#include <functional>
#include <iostream>

#include "app/ras_watch_flow.h"
#include "cli/commands.h"
#include "cli/database_options.h"
#include "cli/ras_report_output.h"
#include "collector/ras/ras_client.h"
#include "collector/ras/ras_report.h"
#include "core/interrupt.h"
#include "core/json_instances.h"

namespace fabtrack::cli {
namespace {

constexpr int kExitNoAnswer = 3;

struct RasStatusOptions {
  ras::QueryOptions query;
  std::string format = "text";
  bool verbose = false;
  double timeout_s = 15;
};

struct Answer {
  ras::Reply reply;
  ras::Report report;
};

// One query, then the report read; a JSON report that cannot be read is
// asked again as text (the other way RAS can answer).
Answer Ask(const RasStatusOptions& o) {
  Answer a;
  ras::QueryOptions q = o.query;
  q.json = true;
  a.reply = ras::Query(q);
  if (a.reply.format == "json") {
    a.report = ras::ParseRasJson(a.reply.body);
    if (a.report.complete) return a;
    std::cerr << "fabtrack ras status: the JSON report could not be read ("
              << (a.report.problems.empty() ? "?" : a.report.problems.front())
              << "); asking for the text report\n";
    q.json = false;
    a.reply = ras::Query(q);
  }
  a.report = ras::ParseRasText(a.reply.body);
  return a;
}

RasReportSource LiveSource(const RasStatusOptions& o) {
  return {"RAS at " + o.query.host + ":" + std::to_string(o.query.port),
          {{"host", o.query.host}, {"port", o.query.port}}};
}

void RunRasStatus(RasStatusOptions& o) {
  o.query.deadline_s = o.timeout_s;
  // RAS gathers from every process under its own timeout; leave room inside
  // ours for the handshake and the reply.
  o.query.gather_timeout_s = std::max(1, static_cast<int>(o.timeout_s * 2 / 3));
  o.query.verbose = true;
  Answer a;
  try {
    a = Ask(o);
  } catch (const ras::QueryError& e) {
    std::cerr << "fabtrack ras status: " << e.what() << "\n";
    throw CommandExit{kExitNoAnswer};
  }
  if (!a.report.complete) {
    std::cerr << "fabtrack ras status: RAS at " << o.query.host << ":" << o.query.port
              << ": incomplete " << a.reply.format
              << " report: " << (a.report.problems.empty() ? "?" : a.report.problems.front())
              << "\n";
    throw CommandExit{kExitNoAnswer};
  }
  ras::Verdict v = ras::Judge(a.report);
  if (o.format == "json") {
    PrintRasVerdictJson(LiveSource(o), a.report, a.reply.format, a.reply.body, v, o.verbose);
  } else {
    PrintRasVerdictText(LiveSource(o), a.report, a.reply.format, a.reply.body, v, o.verbose);
  }
  if (v.health != ras::Health::kHealthy) throw CommandExit{static_cast<int>(v.health)};
}

struct RasWatchOptions {
  app::RasWatchRequest request;
  double timeout_s = 15;
  bool until_done = false;
  bool no_resolve = false;
  bool no_monitor = false;
  std::string format = "text";
};

std::string WatchRankLine(const RasWatchRank& k) {
  // A process (from RAS's events) has no rank of its own.
  std::string s = k.rank < 0 ? "process on " : "rank " + std::to_string(k.rank) + " on ";
  if (k.host.empty()) {
    s += k.node.empty() ? "?" : k.node;
  } else {
    s += k.host + (k.node.empty() || k.node == k.host ? "" : " (" + k.node + ")");
  }
  if (!k.gpu.empty()) s += "  GPU " + k.gpu;
  if (!k.nic.empty()) s += "  NIC " + k.nic;
  if (k.pid) s += "  pid " + std::to_string(*k.pid);
  if (!k.detail.empty()) s += "  " + k.detail;
  return s;
}

// "unconfirmed": the database was away, so whether an earlier watch
// alerted this job is not known; alerting again beats alerting never.
std::string AlertState(const app::RasWatchResult& r) {
  const bool alarming = r.verdict.Stuck() || r.verdict.PeerDead();
  return alarming && !r.verdict_stored        ? "unconfirmed"
         : r.first_stuck || r.first_peer_dead ? "new"
         : alarming                           ? "repeat"
                                              : "none";
}

// What the alert is about: "stuck", "process dead", or both.
std::string AlertReason(const app::RasWatchResult& r) {
  std::string out = r.verdict.Stuck() ? "stuck" : "";
  if (r.verdict.PeerDead()) out += out.empty() ? "process dead" : ", process dead";
  return out;
}

// One line for a pager or a chat (the Slurm watchdog's ALERT_COMMAND): what
// the alert is about, then the worst findings with the ranks they name, by
// host, GPU and pid. No double quotes or backslashes (replaced by ' and /):
// the watchdog takes it from the JSON with grep, and a shell passes it on.
std::string AlertSummary(const RasWatchOptions& o, const app::RasWatchResult& r) {
  const std::string reason = AlertReason(r);
  if (reason.empty()) return "";
  std::string out = "job " + o.request.job_id + " on " + o.request.cluster + " " + reason +
                    " (NCCL RAS, " + r.verdict.health + ")";
  std::vector<const RasWatchFinding*> worst;
  for (const RasWatchFinding& f : r.verdict.findings) {
    if (f.severity == "critical") worst.push_back(&f);
  }
  for (const RasWatchFinding& f : r.verdict.findings) {
    if (f.severity != "critical") worst.push_back(&f);
  }
  constexpr size_t kFindings = 3, kRanks = 3;
  for (size_t i = 0; i < worst.size() && i < kFindings; ++i) {
    const RasWatchFinding& f = *worst[i];
    out += "; " + f.kind + ": " + f.message;
    for (size_t k = 0; k < f.ranks.size() && k < kRanks; ++k) {
      out += (k == 0 ? ": " : ", ") + WatchRankLine(f.ranks[k]);
    }
    if (f.ranks.size() > kRanks) out += " (+" + std::to_string(f.ranks.size() - kRanks) + " more)";
    if (!f.port_changes.empty()) out += "; port " + f.port_changes.front();
    if (!f.node_facts.empty()) out += "; node " + f.node_facts.front();
  }
  if (worst.size() > kFindings) {
    out += "; +" + std::to_string(worst.size() - kFindings) + " more findings";
  }
  for (char& c : out) {
    if (c == '"') c = '\'';
    if (c == '\\') c = '/';
    if (c == '\n' || c == '\t' || c == '\r') c = ' ';
  }
  return out;
}

std::string EventLine(const RasEvent& e) {
  std::string s = "event at " + e.received_at + ": " + e.event;
  if (e.pid) s += " process " + std::to_string(*e.pid);
  if (!e.node.empty()) {
    s += " on " + (e.host.empty() ? e.node : e.host + " (" + e.node + ")");
    if (!e.port.empty()) s += " port " + e.port;
  }
  if (!e.gpus.empty()) s += "  GPU " + e.gpus;
  if (!e.details.empty()) s += "  " + e.details;
  return s;
}

void PrintWatchText(const RasWatchOptions& o, const app::RasWatchResult& r) {
  const RasWatchVerdict& v = r.verdict;
  std::cout << "job " << o.request.job_id << " on " << o.request.cluster << ": " << v.health
            << " over " << v.snapshots << (v.snapshots == 1 ? " snapshot" : " snapshots") << " ("
            << v.first_taken_at << " .. " << v.last_taken_at << "; ended: " << r.ended;
  if (r.monitor != "off") std::cout << "; events: " << r.monitor << ", " << r.events << " read";
  std::cout << ")\n";
  for (const RasWatchFinding& f : v.findings) {
    std::cout << "  " << f.severity << " " << f.kind << " " << f.communicator << " since "
              << f.since << ": " << f.message << "\n";
    for (const RasWatchRank& k : f.ranks) std::cout << "    " << WatchRankLine(k) << "\n";
    for (const std::string& line : f.port_changes) std::cout << "    port " << line << "\n";
    for (const std::string& line : f.node_facts) std::cout << "    node " << line << "\n";
  }
  if (!r.unmapped_nodes.empty()) {
    std::cout << "  no host known for " << r.unmapped_nodes.size()
              << (r.unmapped_nodes.size() == 1 ? " node: " : " nodes: ");
    for (size_t i = 0; i < r.unmapped_nodes.size(); ++i) {
      std::cout << (i ? ", " : "") << r.unmapped_nodes[i];
    }
    std::cout << " (--hosts-file)\n";
  }
  if (!r.port_counters_read) {
    std::cout << "  the database is away: the hosts' port counters were not read\n";
  }
  if (AlertState(r) == "unconfirmed") {
    std::cout << "alert: unconfirmed: job " << o.request.job_id << " " << AlertReason(r)
              << " (the database is away: whether it was alerted before is not known)\n";
  } else if (r.first_stuck) {
    std::cout << "alert: new: job " << o.request.job_id << " stuck (first found stuck at "
              << r.first_stuck_at.value_or("?") << ")\n";
  } else if (v.Stuck()) {
    std::cout << "alert: repeat: job " << o.request.job_id << " already found stuck at "
              << r.first_stuck_at.value_or("?") << "\n";
  }
  if (!r.verdict_stored) {
    // Said above.
  } else if (r.first_peer_dead) {
    // The event's time (first_peer_dead_at is the dedup key: the watch's judged time).
    std::string since;
    for (const RasWatchFinding& f : v.findings) {
      if (f.kind == "peer_dead") since = f.since;
    }
    std::cout << "alert: new: job " << o.request.job_id
              << " has a process declared dead (PEER_DEAD read at " << since << ")\n";
  } else if (v.PeerDead()) {
    std::cout << "alert: repeat: job " << o.request.job_id
              << " already alerted for a process declared dead (by the watch judged at "
              << r.first_peer_dead_at.value_or("?") << ")\n";
  }
}

// Where the document holds snapshot i's communicators: a string in their
// place, replaced by their text (RasCommunicatorsDump, no DOM of 10^5 ranks)
// when printed. Found with its key: no value of the report can hold `"key":
// "` (a quote in a value is escaped).
// The verdict's place, as the communicators' (it names each rank behind).
constexpr const char* kVerdictSlot = "@ras-verdict@";
std::string SlotValue(size_t i) { return "@ras-communicators-" + std::to_string(i) + "@"; }
std::string CommunicatorsSlot(size_t i) { return "\"communicators\": \"" + SlotValue(i) + "\""; }

void PrintWatchJson(const RasWatchOptions& o, const app::RasWatchResult& r) {
  nlohmann::json snapshots = nlohmann::json::array();
  for (size_t i = 0; i < r.snapshots.size(); ++i) {
    const RasSnapshot& s = r.snapshots[i];
    snapshots.push_back({{"taken_at", s.taken_at},
                         {"report_format", s.report_format},
                         {"nccl_version", s.nccl_version},
                         {"health", s.health},
                         {"communicators", SlotValue(i)}});
  }
  nlohmann::json doc = {{"job", o.request.job_id},
                        {"cluster", o.request.cluster},
                        {"host", o.request.query.host},
                        {"port", o.request.query.port},
                        {"ended", r.ended},
                        {"verdict", kVerdictSlot},
                        {"alert", AlertState(r)},
                        {"alert_reason", AlertReason(r)},
                        {"alert_summary", AlertSummary(o, r)},
                        {"stored", r.verdict_stored},
                        {"port_counters_read", r.port_counters_read},
                        {"monitor", r.monitor},
                        {"events", r.events},
                        {"unmapped_nodes", r.unmapped_nodes},
                        {"snapshots", std::move(snapshots)}};
  doc["first_stuck_at"] =
      r.first_stuck_at ? nlohmann::json(*r.first_stuck_at) : nlohmann::json(nullptr);
  doc["first_peer_dead_at"] =
      r.first_peer_dead_at ? nlohmann::json(*r.first_peer_dead_at) : nlohmann::json(nullptr);
  constexpr auto kReplace = nlohmann::json::error_handler_t::replace;
  std::string text = doc.dump(2, ' ', false, kReplace);
  // The slots in the order the document holds them (keys sorted: the
  // snapshots before the verdict).
  std::vector<std::pair<std::string, std::function<std::string(size_t)>>> slots;
  for (size_t i = 0; i < r.snapshots.size(); ++i) {
    slots.emplace_back(CommunicatorsSlot(i), [&r, i, kReplace](size_t depth) {
      return RasCommunicatorsDump(r.snapshots[i].communicators, 2, depth, kReplace);
    });
  }
  slots.emplace_back(
      std::string("\"verdict\": \"") + kVerdictSlot + "\"",
      [&r, kReplace](size_t depth) { return RasWatchVerdictDump(r.verdict, 2, depth, kReplace); });
  size_t from = 0;
  for (const auto& [slot, render] : slots) {
    size_t at = text.find(slot, from);
    if (at == std::string::npos) continue;  // cannot be: the document holds every slot
    size_t line = text.rfind('\n', at);
    size_t depth = at - (line == std::string::npos ? 0 : line + 1);
    std::cout.write(text.data() + from, static_cast<std::streamsize>(at - from));
    std::cout << slot.substr(0, slot.find(':') + 2) << render(depth);
    from = at + slot.size();
  }
  std::cout.write(text.data() + from, static_cast<std::streamsize>(text.size() - from));
  std::cout << "\n";
}

void RunRasWatch(RasWatchOptions& o) {
  if (o.request.cluster.empty()) {
    if (const char* env = std::getenv("FABTRACK_CLUSTER"); env && *env) o.request.cluster = env;
  }
  if (o.request.cluster.empty()) {
    std::cerr << "fabtrack ras watch: needs --cluster (or FABTRACK_CLUSTER): the snapshots are "
                 "stored with the job\n";
    throw CommandExit{kExitUsage};
  }
  if (o.request.count == 0 && !o.until_done) {
    std::cerr << "fabtrack ras watch: say how long: --count N or --until-done\n";
    throw CommandExit{kExitUsage};
  }
  o.request.query.deadline_s = o.timeout_s;
  o.request.query.gather_timeout_s = std::max(1, static_cast<int>(o.timeout_s * 2 / 3));
  o.request.query.verbose = true;
  o.request.resolve = !o.no_resolve;
  o.request.monitor = !o.no_monitor;
  InstallInterruptHandlers();
  bool text = o.format == "text";
  app::RasWatchProgress progress;
  progress.snapshot = [text](int i, const RasSnapshot& s) {
    if (!text) return;
    std::cout << "snapshot " << i << " at " << s.taken_at << ": " << s.health << ", "
              << s.communicators.size()
              << (s.communicators.size() == 1 ? " communicator" : " communicators") << " ("
              << s.report_format << " report)\n"
              << std::flush;
  };
  progress.no_answer = [](const std::string& why) {
    std::cerr << "fabtrack ras watch: " << why << "\n";
  };
  progress.event = [text](const RasEvent& e) {
    if (text) std::cout << EventLine(e) << "\n" << std::flush;
  };
  progress.notice = [](const std::string& what) {
    std::cerr << "fabtrack ras watch: " << what << "\n";
  };
  app::RasWatchResult r = app::WatchRas(o.request, progress, std::cerr);
  if (text) {
    PrintWatchText(o, r);
  } else {
    PrintWatchJson(o, r);
  }
  int code = r.verdict.health == "critical" ? 2 : r.verdict.health == "warning" ? 1 : 0;
  if (code != 0) throw CommandExit{code};
}

// Where the job's RAS thread listens and how long to wait for it: the same
// three options for every command that talks to a live RAS.
void AddRasPeerOptions(CLI::App* command, ras::QueryOptions* query, double* timeout_s,
                       const std::string& timeout_help) {
  command->add_option("--host", query->host, "where the RAS thread listens (default localhost)")
      ->check(NameValue());
  command->add_option("--port", query->port, "its port (default 28028, NCCL_RAS_ADDR)")
      ->check(WholeNumber(1, 65535));
  command->add_option("--timeout", *timeout_s, timeout_help)
      ->check(PositiveAmount())
      ->check(CLI::Range(0.0, 86400.0));  // a day at most: the deadline stays representable
}

}  // namespace

void SetupRas(CLI::App& app) {
  CLI::App* ras = app.add_subcommand("ras", "NCCL's RAS (NCCL >= 2.24): a running job's health");
  ras->require_subcommand(1);
  auto o = std::make_shared<RasStatusOptions>();
  CLI::App* status = ras->add_subcommand(
      "status",
      "Ask a job's RAS thread for VERBOSE STATUS (JSON where NCCL offers it, text otherwise) "
      "and name the communicators and ranks dead, missing or behind, by node IP, GPU and pid. "
      "Exit 0 healthy, 1 warning, 2 critical, 3 no whole answer (nothing listens, the peer "
      "stalled, the reply too large or unreadable)");
  AddRasPeerOptions(status, &o->query, &o->timeout_s,
                    "seconds for the whole query: connect, handshake, reply (default 15); RAS is "
                    "asked to gather within two thirds of it");
  AddFormatOption(status, &o->format, {"text", "json"});
  status->add_flag("--verbose", o->verbose, "print RAS's own report after the summary");
  status->callback([o] { RunRasStatus(*o); });
  SetupRasRead(ras);

  auto w = std::make_shared<RasWatchOptions>();
  CLI::App* watch = ras->add_subcommand(
      "watch",
      "Ask a job's RAS every --every seconds, store each snapshot with the job, and judge them: "
      "communicators stuck (counts frozen while running), laggards (ranks behind, however "
      "many), dead or unresponsive ranks, by host, GPU and pid with their hosts' port counters "
      "over the window. Exit 0 healthy, 1 warning, 2 critical, 3 no verdict");
  watch->add_option("--every", w->request.every_s, "seconds between snapshots")
      ->required()
      ->check(PositiveAmount())
      ->check(CLI::Range(0.0, 86400.0));
  watch->add_option("--job", w->request.job_id, "the job's id (Slurm's SLURM_JOB_ID)")
      ->required()
      ->check(NameValue());
  watch->add_option("--cluster", w->request.cluster, "cluster (or FABTRACK_CLUSTER)")
      ->check(NameValue());
  CLI::Option* count =
      watch->add_option("--count", w->request.count, "take N snapshots")->check(PositiveCount());
  watch
      ->add_flag("--until-done", w->until_done,
                 "until the job's communicators finalize, RAS stops answering or the job is "
                 "found stuck")
      ->excludes(count);
  watch
      ->add_option("--max-duration", w->request.max_duration_s,
                   "stop after S seconds whatever else (default: none)")
      ->check(PositiveAmount())
      ->check(CLI::Range(0.0, 31.0 * 86400));
  watch->add_option("--hosts-file", w->request.hosts_file,
                    "the job's node addresses and names, hosts(5) lines \"IP name\" (RAS names "
                    "processes by IP address)");
  watch->add_flag("--no-resolve", w->no_resolve,
                  "do not reverse-resolve addresses the hosts file does not name");
  watch->add_flag("--no-monitor", w->no_monitor,
                  "do not read RAS's event stream (NCCL >= 2.29, MONITOR): polls only");
  AddRasPeerOptions(watch, &w->request.query, &w->timeout_s,
                    "seconds for each query: connect, handshake, reply (default 15)");
  AddFormatOption(watch, &w->format, {"text", "json"});
  AddDatabaseOptions(watch, &w->request.database);
  watch->callback([w] { RunRasWatch(*w); });
}

}  // namespace fabtrack::cli
