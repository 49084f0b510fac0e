#include "store/ab_store.h"

#include <pqxx/pqxx>

#include "core/ab_comparison_json.h"
#include "core/content_hash.h"
#include "core/text.h"
#include "store/copy_row.h"

namespace fabtrack::store {
namespace {

std::string DoubleArrayLiteral(const std::vector<double>& values) {
  std::string text = "{";
  for (size_t i = 0; i < values.size(); ++i) text += (i ? "," : "") + FormatDouble(values[i]);
  return text + "}";
}

void WriteJudgement(pqxx::transaction_base& txn, int64_t comparison_id, const AbJudgement& j) {
  CopyRow p;
  p.Int(comparison_id)
      .Text(j.collective)
      .Int(int64_t{j.nodes})
      .Text(j.metric)
      .Int(j.size_bytes)
      .Text(DoubleArrayLiteral(j.a))
      .Text(DoubleArrayLiteral(j.b))
      .Real(j.ratio)
      .Real(j.ratio_low)
      .Real(j.ratio_high)
      .Real(j.noise)
      .Text(std::string(AbOutcomeName(j.outcome)));
  txn.exec_params(
      "INSERT INTO ab_judgements (comparison_id, collective, nodes, metric, size_bytes, a, b, "
      "ratio, ratio_low, ratio_high, noise, outcome) VALUES ($1::bigint, $2, $3::int, $4, "
      "$5::bigint, $6::float8[], $7::float8[], $8::float8, $9::float8, $10::float8, $11::float8, "
      "$12)",
      pqxx::prepare::make_dynamic_params(p.fields()));
}

}  // namespace

RecordWrite WriteAbComparison(pqxx::transaction_base& txn, const AbRecord& r) {
  RecordWrite result;
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING",
                  r.cluster);
  const std::string hash = Sha256Hex(AbRecordToJson(r).dump());
  pqxx::result inserted = txn.exec_params(
      "INSERT INTO ab_comparisons (cluster, ab_id, compared_at, setting, rounds, run_order, "
      "outcome, content_hash) VALUES ($1, $2, $3::timestamptz, $4, $5::int, $6, $7, $8) "
      "ON CONFLICT (content_hash) DO NOTHING RETURNING id",
      r.cluster, r.ab_id, r.compared_at, r.setting, r.rounds, r.order, AbOutcomeName(r.outcome),
      hash);
  if (inserted.empty()) {
    pqxx::row old = txn.exec_params1(
        "SELECT c.id, (SELECT count(*) FROM ab_comparison_runs l WHERE l.comparison_id = c.id) "
        "FROM ab_comparisons c WHERE content_hash = $1",
        hash);
    result.id = old[0].as<int64_t>();
    result.linked_runs = old[1].as<int>();
    return result;
  }
  result.inserted = true;
  result.id = inserted[0][0].as<int64_t>();
  for (const AbJudgement& j : r.headlines) WriteJudgement(txn, result.id, j);
  for (const AbJudgement& j : r.sizes) WriteJudgement(txn, result.id, j);
  pqxx::result linked = txn.exec_params(
      "INSERT INTO ab_comparison_runs (comparison_id, run_id, side, round) "
      "SELECT $1::bigint, id, tags->>'ab_side', (tags->>'ab_round')::int FROM runs "
      "WHERE cluster = $2 AND tags->>'ab_id' = $3 AND tags->>'ab_side' IN ('A', 'B') "
      "AND tags->>'ab_round' ~ '^[1-9][0-9]{0,8}$' "
      "ON CONFLICT DO NOTHING RETURNING run_id",
      result.id, r.cluster, r.ab_id);
  result.linked_runs = static_cast<int>(linked.size());
  return result;
}

std::vector<AbSummary> ListAbComparisons(pqxx::connection_base& connection,
                                         const std::optional<std::string>& cluster, int limit) {
  pqxx::read_transaction txn(connection);
  pqxx::result rows = txn.exec_params(
      "SELECT c.id, c.cluster, c.ab_id, to_char(c.compared_at AT TIME ZONE 'UTC', "
      "'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'), c.setting, c.rounds, c.run_order, c.outcome, "
      "(SELECT coalesce(string_agg(l.run_id::text, ',' ORDER BY l.round, l.side, l.run_id), '') "
      " FROM ab_comparison_runs l WHERE l.comparison_id = c.id) "
      "FROM ab_comparisons c WHERE ($1::text IS NULL OR c.cluster = $1) "
      "ORDER BY c.compared_at DESC, c.id DESC LIMIT $2",
      cluster, limit);
  std::vector<AbSummary> out;
  for (const pqxx::row& row : rows) {
    AbSummary s;
    s.id = row[0].as<int64_t>();
    s.cluster = row[1].as<std::string>();
    s.ab_id = row[2].as<std::string>();
    s.compared_at = row[3].as<std::string>();
    s.setting = row[4].as<std::string>();
    s.rounds = row[5].as<int>();
    s.order = row[6].as<std::string>();
    s.outcome = row[7].as<std::string>();
    const std::string ids = row[8].as<std::string>();
    if (!ids.empty()) {
      for (std::string_view id : Split(ids, ',')) s.run_ids.push_back(std::stoll(std::string(id)));
    }
    out.push_back(std::move(s));
  }
  return out;
}

}  // namespace fabtrack::store
