#include "store/locate_store.h"

#include <map>
#include <pqxx/pqxx>
#include <sstream>

#include "core/content_hash.h"
#include "core/locate_json.h"
#include "store/copy_row.h"
#include "store/row_fields.h"

namespace fabtrack::store {
namespace {}  // namespace

RecordWrite WriteLocateVerdict(pqxx::transaction_base& txn, const LocateRecord& r) {
  RecordWrite result;
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                  r.cluster);
  const LocateVerdict& v = r.verdict;
  CopyRow p;
  p.Text(r.cluster)
      .Text(r.located_at)
      .TextArray(r.hosts)
      .Int(static_cast<int64_t>(r.hosts.size()))
      .Int(int64_t{v.rounds})
      .Real(r.seconds)
      .Int(int64_t{r.probes})
      .Bool(v.settled)
      .Real(v.busbw_spread)
      .Real(v.latency_spread)
      .Int(int64_t{r.exit_status})
      .Bool(r.budget_spent)
      .Text(r.sweep_id)
      .Text(Sha256Hex(LocateRecordToJson(r).dump()));
  pqxx::result inserted = txn.exec_params(
      "INSERT INTO locate_verdicts (cluster, located_at, hosts, nodes, rounds, seconds, probes, "
      "settled, busbw_spread, latency_spread, exit_status, budget_spent, sweep_id, content_hash) "
      "VALUES ($1, $2::timestamptz, $3::text[], $4::int, $5::int, $6::float8, $7::int, "
      "$8::boolean, $9::float8, $10::float8, $11::int, $12::boolean, $13, $14) "
      "ON CONFLICT (content_hash) DO NOTHING RETURNING id",
      pqxx::prepare::make_dynamic_params(p.fields()));
  if (inserted.empty()) {
    pqxx::row old = txn.exec_params1(
        "SELECT v.id, (SELECT count(*) FROM locate_verdict_runs l WHERE l.verdict_id = v.id) "
        "FROM locate_verdicts v WHERE content_hash = $1",
        p.fields().back().text);
    result.id = old[0].as<int64_t>();
    result.linked_runs = old[1].as<int>();
    return result;
  }
  result.inserted = true;
  result.id = inserted[0][0].as<int64_t>();
  int rank = 0;
  for (const LocateSuspect& s : v.suspects) {
    txn.exec_params(
        "INSERT INTO locate_suspects (verdict_id, rank, kind, name, score, evidence) "
        "VALUES ($1, $2, $3, $4, $5::float8, $6::text[])",
        result.id, ++rank, s.kind, s.name, FormatDouble(s.score), PgTextArrayLiteral(s.evidence));
  }
  CopyRow l;
  l.Int(result.id).Text(r.cluster).Text(PgBigintArrayLiteral(r.run_ids)).Text(r.sweep_id);
  pqxx::result linked = txn.exec_params(
      "INSERT INTO locate_verdict_runs (verdict_id, run_id) "
      "SELECT $1::bigint, id FROM runs WHERE cluster = $2 "
      "AND (id = ANY($3::bigint[]) OR sweep_id = $4::text) "
      "ON CONFLICT DO NOTHING RETURNING run_id",
      pqxx::prepare::make_dynamic_params(l.fields()));
  result.linked_runs = static_cast<int>(linked.size());
  return result;
}

std::vector<StoredLocate> ReadLocateVerdicts(pqxx::transaction_base& txn,
                                             const std::string& cluster, int limit) {
  std::vector<StoredLocate> out;
  std::map<int64_t, size_t> at;
  for (const pqxx::row& row : txn.exec_params(
           "SELECT id, extract(epoch FROM located_at)::float8, "
           "to_char(located_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), hosts, "
           "rounds, seconds, probes, settled, busbw_spread, latency_spread, exit_status, "
           "budget_spent, sweep_id FROM locate_verdicts WHERE cluster = $1 "
           "ORDER BY located_at DESC, id DESC LIMIT $2",
           cluster, limit)) {
    StoredLocate s;
    LocateRecord& r = s.record;
    r.cluster = cluster;
    ReadColumns(row, 0, &s.id, &s.located_at, &r.located_at, &r.hosts, &r.verdict.rounds,
                &r.seconds, &r.probes, &r.verdict.settled, OrZero<double>{&r.verdict.busbw_spread},
                OrZero<double>{&r.verdict.latency_spread}, &r.exit_status, &r.budget_spent,
                &r.sweep_id);
    at[s.id] = out.size();
    out.push_back(std::move(s));
  }
  if (out.empty()) return out;
  std::vector<int64_t> ids;
  for (const auto& [id, i] : at) ids.push_back(id);
  for (const pqxx::row& row :
       txn.exec_params("SELECT verdict_id, kind, name, score, evidence FROM locate_suspects "
                       "WHERE verdict_id = ANY($1::bigint[]) ORDER BY verdict_id, rank",
                       PgBigintArrayLiteral(ids))) {
    out[at.at(row[0].as<int64_t>())].record.verdict.suspects.push_back(
        {.kind = row[1].as<std::string>(),
         .name = row[2].as<std::string>(),
         .score = row[3].as<double>(),
         .evidence = PgTextArrayField(row[4])});
  }
  for (const pqxx::row& row :
       txn.exec_params("SELECT verdict_id, run_id FROM locate_verdict_runs "
                       "WHERE verdict_id = ANY($1::bigint[]) ORDER BY verdict_id, run_id",
                       PgBigintArrayLiteral(ids))) {
    out[at.at(row[0].as<int64_t>())].record.run_ids.push_back(row[1].as<int64_t>());
  }
  return out;
}

std::vector<int64_t> ReadFlaggedRuns(pqxx::transaction_base& txn, const std::string& cluster,
                                     const std::string& since,
                                     const std::vector<std::string>& kinds) {
  std::vector<int64_t> out;
  for (const pqxx::row& row : txn.exec_params(
           "SELECT DISTINCT r.id, r.started_at FROM findings f JOIN runs r ON r.id = f.run_id "
           "WHERE f.cluster = $1 AND r.cluster = $1 AND f.state <> 'resolved' "
           "AND f.kind = ANY($3::text[]) AND r.started_at >= $2::timestamptz "
           "ORDER BY r.started_at, r.id",
           cluster, since, PgTextArrayLiteral(kinds))) {
    out.push_back(row[0].as<int64_t>());
  }
  return out;
}

}  // namespace fabtrack::store
