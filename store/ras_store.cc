#include "store/ras_store.h"

#include <pqxx/pqxx>

#include "core/clock.h"
#include "core/json_instances.h"
#include "core/node_topology_json.h"
#include "core/port_sample.h"
#include "store/copy_row.h"
#include "store/row_fields.h"

namespace fabtrack::store {
namespace {

// timestamptz as RFC 3339 UTC with microseconds, as the writers store it.
constexpr const char* kIso = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'";

std::string IsoColumn(const std::string& column) {
  return "to_char(" + column + " AT TIME ZONE 'UTC', " + kIso + ")";
}

// A counter's column in port_counter_samples (store/port_writer.cc).
std::string ColumnOf(const std::string& counter) {
  return counter == "VL15_dropped" ? "vl15_dropped" : counter;
}

}  // namespace

int64_t WriteRasSnapshot(pqxx::transaction_base& txn, const RasSnapshot& s) {
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                  s.cluster);
  pqxx::row row = txn.exec_params1(
      "INSERT INTO ras_snapshots (cluster, job_id, taken_at, report_format, nccl_version, health, "
      "communicators) VALUES ($1, $2, $3::timestamptz, $4, $5, $6, $7::jsonb) "
      "ON CONFLICT (cluster, job_id, taken_at) DO UPDATE SET report_format = "
      "EXCLUDED.report_format, nccl_version = EXCLUDED.nccl_version, health = EXCLUDED.health, "
      "communicators = EXCLUDED.communicators RETURNING id",
      s.cluster, s.job_id, s.taken_at, s.report_format, s.nccl_version, s.health,
      RasCommunicatorsDump(s.communicators));
  return row[0].as<int64_t>();
}

std::vector<RasSnapshot> ReadRasSnapshots(pqxx::transaction_base& txn, const std::string& cluster,
                                          const std::string& job_id, const std::string& since,
                                          int limit) {
  pqxx::result rows = txn.exec_params(
      "SELECT * FROM (SELECT " + IsoColumn("taken_at") +
          ", extract(epoch FROM taken_at), report_format, nccl_version, health, "
          "communicators::text FROM ras_snapshots WHERE cluster = $1 AND job_id = $2 AND "
          "taken_at >= coalesce(nullif($3, '')::timestamptz, '-infinity') ORDER BY taken_at "
          "DESC LIMIT $4) newest ORDER BY 2",
      cluster, job_id, since, limit);
  std::vector<RasSnapshot> out;
  for (const pqxx::row& row : rows) {
    RasSnapshot s;
    s.cluster = cluster;
    s.job_id = job_id;
    ReadColumns(row, 0, &s.taken_at, &s.taken_at_s, &s.report_format, &s.nccl_version, &s.health);
    s.communicators = RasCommunicatorsFromJson(nlohmann::json::parse(row[5].as<std::string>()));
    out.push_back(std::move(s));
  }
  return out;
}

void WriteRasEvent(pqxx::transaction_base& txn, const std::string& cluster,
                   const std::string& job_id, const RasEvent& e) {
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", cluster);
  // Once: a spooled event replayed twice (a crash between the commit and
  // the batch's removal) is the same line read at the same instant.
  txn.exec_params(
      "INSERT INTO ras_events (cluster, job_id, received_at, event_time, event_group, event, node, "
      "host, pid, gpus, details, stream_format, raw) SELECT $1, $2, $3::timestamptz, $4, $5, $6, "
      "$7, $8, $9, $10, $11, $12, $13 WHERE NOT EXISTS (SELECT 1 FROM ras_events WHERE cluster = "
      "$1 AND job_id = $2 AND received_at = $3::timestamptz AND event = $6 AND raw = $13)",
      cluster, job_id, e.received_at, e.event_time, e.group, e.event, e.node, e.host, e.pid, e.gpus,
      e.details, e.format, e.raw);
}

std::vector<RasEvent> ReadRasEvents(pqxx::transaction_base& txn, const std::string& cluster,
                                    const std::string& job_id, int limit) {
  pqxx::result rows = txn.exec_params(
      "SELECT * FROM (SELECT " + IsoColumn("received_at") +
          ", event_time, event_group, event, node, host, pid, gpus, details, stream_format, raw, "
          "received_at AS t, id FROM ras_events WHERE cluster = $1 AND job_id = $2 ORDER BY "
          "received_at DESC, id DESC LIMIT $3) newest ORDER BY t, id",
      cluster, job_id, limit);
  std::vector<RasEvent> out;
  for (const pqxx::row& row : rows) {
    RasEvent e;
    ReadColumns(row, 0, &e.received_at, &e.event_time, &e.group, &e.event, &e.node, &e.host, &e.pid,
                &e.gpus, &e.details, &e.format, &e.raw);
    e.known = e.group == "LIFECYCLE" || e.group == "TRACE";
    out.push_back(std::move(e));
  }
  return out;
}

RasVerdictWrite WriteRasJobVerdict(pqxx::transaction_base& txn, const std::string& cluster,
                                   const std::string& job_id, const RasWatchVerdict& verdict) {
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", cluster);
  bool stuck = verdict.Stuck();
  bool peer_dead = verdict.PeerDead();
  // One statement, so that two watches of one job racing each other cannot
  // both be first: the upsert locks the row, and the one that set
  // first_stuck_at (first_peer_dead_at) is the one whose judged time it holds.
  // A verdict older than the stored one (spooled while the database was
  // away, replayed after a later watch) moves the first times earlier where
  // it saw the job stuck first, and leaves the newer verdict in place.
  pqxx::row row = txn.exec_params1(
      "INSERT INTO ras_job_verdicts (cluster, job_id, first_taken_at, judged_at, snapshots, "
      "health, stuck, first_stuck_at, verdict, first_peer_dead_at) VALUES ($1, $2, "
      "$3::timestamptz, $4::timestamptz, $5, $6, $7, CASE WHEN $7 THEN $4::timestamptz END, "
      "$8::jsonb, CASE WHEN $9 THEN $4::timestamptz END) "
      "ON CONFLICT (cluster, job_id) DO UPDATE SET first_taken_at = least("
      "ras_job_verdicts.first_taken_at, EXCLUDED.first_taken_at), judged_at = "
      "greatest(ras_job_verdicts.judged_at, EXCLUDED.judged_at), snapshots = CASE WHEN "
      "EXCLUDED.judged_at >= ras_job_verdicts.judged_at THEN EXCLUDED.snapshots ELSE "
      "ras_job_verdicts.snapshots END, health = CASE WHEN EXCLUDED.judged_at >= "
      "ras_job_verdicts.judged_at THEN EXCLUDED.health ELSE ras_job_verdicts.health END, stuck = "
      "CASE WHEN EXCLUDED.judged_at >= ras_job_verdicts.judged_at THEN EXCLUDED.stuck ELSE "
      "ras_job_verdicts.stuck END, first_stuck_at = least(ras_job_verdicts.first_stuck_at, "
      "EXCLUDED.first_stuck_at), verdict = CASE WHEN EXCLUDED.judged_at >= "
      "ras_job_verdicts.judged_at THEN EXCLUDED.verdict ELSE ras_job_verdicts.verdict END, "
      "first_peer_dead_at = least(ras_job_verdicts.first_peer_dead_at, "
      "EXCLUDED.first_peer_dead_at) RETURNING " +
          IsoColumn("first_stuck_at") +
          ", coalesce(stuck AND first_stuck_at = $4::timestamptz, false), " +
          IsoColumn("first_peer_dead_at") +
          ", coalesce($9 AND first_peer_dead_at = $4::timestamptz, false)",
      cluster, job_id, verdict.first_taken_at, verdict.last_taken_at, verdict.snapshots,
      verdict.health, stuck, RasWatchVerdictDump(verdict), peer_dead);
  RasVerdictWrite out;
  ReadColumns(row, 0, &out.first_stuck_at, &out.first_stuck, &out.first_peer_dead_at,
              &out.first_peer_dead);
  return out;
}

std::vector<StoredRasJobVerdict> ReadRasJobVerdicts(pqxx::transaction_base& txn,
                                                    const std::string& cluster, double since,
                                                    int limit) {
  pqxx::result rows = txn.exec_params(
      "SELECT job_id, extract(epoch FROM judged_at), " + IsoColumn("first_stuck_at") +
          ", verdict::text FROM ras_job_verdicts WHERE cluster = $1 AND judged_at >= "
          "to_timestamp($2) ORDER BY judged_at DESC, job_id LIMIT $3",
      cluster, since, limit);
  std::vector<StoredRasJobVerdict> out;
  for (const pqxx::row& row : rows) {
    StoredRasJobVerdict v;
    ReadColumns(row, 0, &v.job_id, &v.judged_at, &v.first_stuck_at);
    try {
      v.verdict = RasWatchVerdictFromJson(nlohmann::json::parse(row[3].as<std::string>()));
    } catch (const nlohmann::json::exception&) {
      continue;  // edited by hand: not a verdict any more
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::vector<HostPortReading> ReadHostPortReadings(pqxx::transaction_base& txn,
                                                  const std::string& cluster,
                                                  const std::vector<std::string>& hosts,
                                                  const std::string& from, const std::string& to) {
  std::string columns;
  for (const char* c : kPortErrorCounters) columns += ", s." + ColumnOf(c);
  // The window's samples and, per port, the one before it.
  pqxx::result rows = txn.exec_params(
      "WITH p AS (SELECT id, host, device, port FROM ports WHERE cluster = $1 AND host = "
      "ANY($2::text[])), "
      "w AS (SELECT s.* FROM port_counter_samples s JOIN p ON p.id = s.port_id WHERE "
      "s.sampled_at BETWEEN $3::timestamptz AND $4::timestamptz "
      "UNION ALL SELECT b.* FROM p CROSS JOIN LATERAL (SELECT * FROM port_counter_samples x "
      "WHERE x.port_id = p.id AND x.sampled_at < $3::timestamptz ORDER BY x.sampled_at DESC "
      "LIMIT 1) b) "
      "SELECT p.host, p.device, p.port, " +
          IsoColumn("s.sampled_at") +
          ", extract(epoch FROM s.sampled_at), coalesce(s.state, ''), s.rate_gbps" + columns +
          " FROM w s JOIN p ON p.id = s.port_id ORDER BY s.sampled_at, p.host, p.device, p.port",
      cluster, PgTextArrayLiteral(hosts), from, to);
  std::vector<HostPortReading> out;
  for (const pqxx::row& row : rows) {
    HostPortReading r;
    ReadColumns(row, 0, &r.host, &r.device, &r.port);
    ReadColumns(row, 4, &r.sampled_at_s, &r.state, &r.rate_gbps);
    r.sampled_at = IsoFromSeconds(r.sampled_at_s, IsoStyle::kSeconds);  // for people
    int i = 7;
    for (const char* c : kPortErrorCounters) {
      r.counters.emplace_back(c, Get<int64_t>(row[i++]));
    }
    out.push_back(std::move(r));
  }
  return out;
}

RasHostKnowledge ReadRasHostKnowledge(pqxx::transaction_base& txn, const std::string& cluster,
                                      const std::vector<std::string>& hosts,
                                      const std::vector<std::string>& wired,
                                      const std::string& to) {
  RasHostKnowledge known;
  const std::string host_list = PgTextArrayLiteral(hosts);
  for (const pqxx::row& row : txn.exec_params(
           "SELECT DISTINCT ON (host) host, fingerprint, CASE WHEN host = ANY($4::text[]) THEN "
           "topology::text END FROM node_topologies WHERE cluster = $1 AND "
           "host = ANY($2::text[]) AND recorded_at <= $3::timestamptz "
           "ORDER BY host, recorded_at DESC, id DESC",
           cluster, host_list, to, PgTextArrayLiteral(wired))) {
    std::string host = row[0].as<std::string>();
    known.facts[host]["topology"] = row[1].as<std::string>();
    if (row[2].is_null()) continue;
    std::string why;
    std::optional<NodeTopology> topology =
        NodeTopologyFromJson(nlohmann::json::parse(row[2].as<std::string>(), nullptr, false), &why);
    if (topology) known.topologies.emplace(std::move(host), std::move(*topology));
  }
  for (const pqxx::row& row : txn.exec_params(
           "SELECT host, device, min(fw_version) FROM ports WHERE cluster = $1 AND "
           "host = ANY($2::text[]) AND coalesce(fw_version, '') <> '' GROUP BY host, device",
           cluster, host_list)) {
    known.facts[row[0].as<std::string>()]["fw_ver " + row[1].as<std::string>()] =
        row[2].as<std::string>();
  }
  return known;
}

}  // namespace fabtrack::store
