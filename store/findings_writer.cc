#include "store/findings_writer.h"

#include <map>
#include <pqxx/pqxx>
#include <set>

#include "core/clock.h"
#include "core/finding.h"
#include "core/problem.h"
#include "store/copy_row.h"

namespace fabtrack::store {
namespace {

struct Merged {
  const Finding* latest = nullptr;
  std::string first_seen, last_seen;  // ISO; run times, so re-analysis is idempotent
  std::set<int64_t> nights;           // NightOf the runs that raised it
};

// How timestamps are read back: ISO 8601 UTC as the analyzer writes them.
constexpr const char* kIsoFormat = "'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'";

}  // namespace

std::vector<ProblemHistory> OpenFindingHistory(pqxx::connection_base& connection,
                                               const std::string& cluster) {
  pqxx::read_transaction txn(connection);
  std::vector<ProblemHistory> history;
  for (const auto& row : txn.exec_params(
           std::string("SELECT kind, subject, to_char(first_seen AT TIME ZONE 'UTC', ") +
               kIsoFormat + "), to_char(last_seen AT TIME ZONE 'UTC', " + kIsoFormat +
               "), coalesce(nights, 0) FROM findings WHERE cluster = $1 AND state <> 'resolved' "
               "ORDER BY kind, subject",
           cluster)) {
    history.push_back({row[0].as<std::string>(), row[1].as<std::string>(), row[2].as<std::string>(),
                       row[3].as<std::string>(), row[4].as<int>()});
  }
  return history;
}

StoredFindings StoreAnalysis(pqxx::connection_base& connection, const AnalysisInput& input,
                             const AnalysisResult& result) {
  StoredFindings stored;
  pqxx::work txn(connection);
  // Two analyses of one cluster at once would race on "one open finding per
  // subject"; they take turns.
  txn.exec_params("SELECT pg_advisory_xact_lock(hashtext('fabtrack_findings:' || $1))",
                  result.cluster);
  const std::string now =
      txn.exec1(std::string("SELECT to_char(now() AT TIME ZONE 'UTC', ") + kIsoFormat + ")")[0]
          .as<std::string>();
  std::string newest_judged = now;
  for (auto it = input.runs.rbegin(); it != input.runs.rend(); ++it) {
    if (input.Judged(*it)) {
      newest_judged = it->started_at_iso;
      break;
    }
  }

  // Several judged runs may raise the same subject (a rerun, several nights
  // of a re-analysis): one row, the newest evidence.
  std::map<std::pair<std::string, std::string>, Merged> merged;
  for (const Finding& f : result.findings) {
    Merged& m = merged[{f.kind, f.subject}];
    const std::string seen = f.run_started_at.value_or(now);
    if (m.latest == nullptr || seen >= m.last_seen) {
      m.latest = &f;
      m.last_seen = seen;
    }
    if (m.first_seen.empty() || seen < m.first_seen) m.first_seen = seen;
    if (std::optional<double> at = ParseIsoSeconds(seen)) m.nights.insert(NightOf(*at));
  }

  std::vector<std::string> kinds, subjects;
  for (const auto& [key, m] : merged) {
    const Finding& f = *m.latest;
    kinds.push_back(f.kind);
    subjects.push_back(f.subject);
    CopyRow p;
    p.Text(result.cluster)
        .Text(f.kind)
        .Text(f.subject)
        .Text(std::string(SeverityName(f.severity)))
        .Int(f.run_id)
        .Real(f.value)
        .Real(f.baseline)
        .Text(f.unit)
        .Text(f.message)
        .Text(f.evidence.dump())
        .Text(m.first_seen)
        .Text(m.last_seen)
        .Text(FindingFingerprint(result.cluster, f.kind, f.subject))
        .Text(f.run_started_at)
        .Int(f.nodes)
        .Text(f.host)
        .Text(f.device)
        .Int(f.port)
        .Int(f.size_bytes);
    // The nights it was seen: what the open row counted, and tonight's
    // window where it goes beyond the row's first and last night.
    pqxx::result open = txn.exec_params(
        std::string("SELECT to_char(first_seen AT TIME ZONE 'UTC', ") + kIsoFormat +
            "), to_char(last_seen AT TIME ZONE 'UTC', " + kIsoFormat +
            "), coalesce(nights, 0) FROM findings "
            "WHERE cluster = $1 AND kind = $2 AND subject = $3 AND state <> 'resolved' "
            "FOR UPDATE",
        result.cluster, f.kind, f.subject);
    int nights = static_cast<int>(m.nights.size());
    if (!open.empty()) {
      nights = NightsWithHistory({f.kind, f.subject, open[0][0].as<std::string>(),
                                  open[0][1].as<std::string>(), open[0][2].as<int>()},
                                 m.nights);
    }
    p.Int(int64_t{nights});
    pqxx::result updated = txn.exec_params(
        "UPDATE findings SET severity = $4, run_id = $5::bigint, value = $6::float8, "
        "baseline = $7::float8, unit = $8, message = $9, evidence = $10::jsonb, "
        "first_seen = least(first_seen, $11::timestamptz), "
        "last_seen = greatest(last_seen, $12::timestamptz), fingerprint = $13, "
        "run_started_at = $14::timestamptz, nodes = $15::int, host = $16, device = $17, "
        "port = $18::int, size_bytes = $19::bigint, nights = $20::int "
        "WHERE cluster = $1 AND kind = $2 AND subject = $3 AND state <> 'resolved' RETURNING id",
        pqxx::prepare::make_dynamic_params(p.fields()));
    if (!updated.empty()) {
      ++stored.refreshed;
      continue;
    }
    txn.exec_params(
        "INSERT INTO findings (cluster, kind, subject, severity, run_id, value, baseline, unit, "
        "message, evidence, first_seen, last_seen, fingerprint, run_started_at, nodes, host, "
        "device, port, size_bytes, nights) VALUES ($1, $2, $3, $4, $5::bigint, $6::float8, "
        "$7::float8, $8, $9, $10::jsonb, $11::timestamptz, $12::timestamptz, $13, "
        "$14::timestamptz, $15::int, $16, $17, $18::int, $19::bigint, $20::int)",
        pqxx::prepare::make_dynamic_params(p.fields()));
    ++stored.opened;
  }

  // Conditions that cleared: open findings of the detectors that ran, not
  // raised again by an analysis that judged newer runs.
  if (result.judged_runs > 0 || result.judged_jobs > 0) {
    pqxx::result resolved = txn.exec_params(
        "UPDATE findings f SET state = 'resolved', "
        "resolved_at = greatest(f.last_seen, $3::timestamptz) "
        "WHERE f.cluster = $1 AND f.state <> 'resolved' AND f.kind = ANY($2::text[]) "
        "AND NOT EXISTS (SELECT 1 FROM unnest($4::text[], $5::text[]) AS c(kind, subject) "
        "                WHERE c.kind = f.kind AND c.subject = f.subject) RETURNING f.id",
        result.cluster, PgTextArrayLiteral(result.detectors_run), newest_judged,
        PgTextArrayLiteral(kinds), PgTextArrayLiteral(subjects));
    stored.resolved = static_cast<int>(resolved.size());
  }

  int by_severity[3] = {0, 0, 0};
  for (const Finding& f : result.findings) ++by_severity[static_cast<int>(f.severity)];
  CopyRow a;
  a.Text(result.cluster)
      .Real(input.judge_from)
      .Int(int64_t{result.judged_runs})
      .Int(static_cast<int64_t>(result.findings.size()))
      .Int(int64_t{by_severity[2]})
      .Int(int64_t{by_severity[1]})
      .Int(int64_t{by_severity[0]})
      .Int(int64_t{ExitStatusOf(result)})
      .TextArray(result.detectors_run);
  stored.analysis_id =
      txn.exec_params1(
             "INSERT INTO analyses (cluster, judge_from, judged_runs, findings, critical, warning, "
             "info, exit_status, detectors) VALUES ($1, to_timestamp($2::float8), $3::int, "
             "$4::int, $5::int, $6::int, $7::int, $8::int, $9::text[]) RETURNING id",
             pqxx::prepare::make_dynamic_params(a.fields()))[0]
          .as<int64_t>();
  txn.commit();
  return stored;
}

}  // namespace fabtrack::store
