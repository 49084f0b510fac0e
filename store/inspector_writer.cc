#include "store/inspector_writer.h"

#include <pqxx/pqxx>

#include "store/copy_row.h"
#include "store/run_writer.h"

namespace fabtrack::store {

bool WriteInspectorJob(pqxx::transaction_base& txn, const std::string& cluster,
                       const InspectorJob& job, const std::string& source_path) {
  EnsureCluster(txn, cluster);
  CopyRow params;
  params.Text(cluster)
      .Text(job.job_id)
      .Text(job.started_at)
      .Text(job.ended_at)
      .Int(job.nnodes)
      .Int(job.nranks)
      .TextArray(job.hosts)
      .Int(job.records)
      .Text(source_path);
  pqxx::result inserted = txn.exec_params(
      "INSERT INTO inspector_jobs (cluster, job_id, started_at, ended_at, nnodes, nranks, hosts, "
      "records, source_path) VALUES ($1, $2, $3::timestamptz, $4::timestamptz, $5::int, $6::int, "
      "$7::text[], $8::bigint, $9) ON CONFLICT (cluster, job_id) DO NOTHING RETURNING id",
      pqxx::prepare::make_dynamic_params(params.fields()));
  if (inserted.empty()) return false;
  const int64_t id = inserted[0][0].as<int64_t>();
  for (const InspectorCollective& c : job.collectives) {
    CopyRow row;
    row.Int(id)
        .Text(c.communicator)
        .Text(c.collective)
        .Int(c.message_bytes)
        .Int(c.nranks)
        .Int(c.count)
        .Real(c.median_us)
        .Real(c.p90_us)
        .Real(c.max_us)
        .Real(c.median_busbw_gbps)
        .Int(c.slowest_rank)
        .Text(c.slowest_rank_host)
        .Real(c.slowest_rank_ratio)
        .Text(c.slowest_host)
        .Real(c.slowest_host_ratio);
    txn.exec_params0(
        "INSERT INTO inspector_collectives (job_id, communicator, collective, message_bytes, "
        "nranks, count, median_us, p90_us, max_us, median_busbw_gbps, slowest_rank, "
        "slowest_rank_host, slowest_rank_ratio, slowest_host, slowest_host_ratio) VALUES ($1, $2, "
        "$3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)",
        pqxx::prepare::make_dynamic_params(row.fields()));
  }
  return true;
}

}  // namespace fabtrack::store
