#include "store/run_writer.h"

#include <algorithm>
#include <array>
#include <cctype>
#include <pqxx/pqxx>
#include <stdexcept>

#include "core/interrupt.h"
#include "core/node_facts.h"
#include "store/copy_row.h"

namespace fabtrack::store {
namespace {

const std::vector<std::string> kRunColumns = {"cluster",
                                              "started_at",
                                              "ended_at",
                                              "source",
                                              "backend",
                                              "collective",
                                              "dtype",
                                              "redop",
                                              "ranks",
                                              "nodes",
                                              "gpus_per_node",
                                              "ranks_per_node",
                                              "hosts",
                                              "gpu_model",
                                              "nccl_version",
                                              "cuda_version",
                                              "driver_version",
                                              "mpi_version",
                                              "nccl_tests_version",
                                              "network",
                                              "transports",
                                              "gdrdma",
                                              "command_line",
                                              "nccl_env",
                                              "node_facts",
                                              "slurm_job_id",
                                              "slurm_step_id",
                                              "tags",
                                              "sweep_id",
                                              "parameters",
                                              "warmup_iters",
                                              "iters",
                                              "avg_busbw_gbps",
                                              "oob_ok",
                                              "oob_count",
                                              "link_straggler_host",
                                              "source_file",
                                              "content_hash",
                                              "table_index",
                                              "status",
                                              "machines",
                                              "max_ranks_per_machine",
                                              "cpus_per_machine"};

std::string RunInsertSql() {
  std::string cols, vals;
  for (size_t i = 0; i < kRunColumns.size(); ++i) {
    if (i) {
      cols += ", ";
      vals += ", ";
    }
    cols += kRunColumns[i];
    vals += "$" + std::to_string(i + 1);
    // Parameters arrive as text; give the server the column types.
    const std::string& c = kRunColumns[i];
    if (c == "started_at" || c == "ended_at") vals += "::timestamptz";
    if (c == "hosts" || c == "transports") vals += "::text[]";
    if (c == "nccl_env" || c == "node_facts" || c == "tags" || c == "parameters") {
      vals += "::jsonb";
    }
  }
  return "INSERT INTO runs (" + cols + ") VALUES (" + vals +
         ") ON CONFLICT (cluster, content_hash, table_index) DO NOTHING RETURNING id";
}

CopyRow RunParameters(const RunRecord& r) {
  CopyRow row;
  row.Text(r.cluster)
      .Text(r.started_at)
      .Text(r.ended_at)
      .Text(r.source)
      .Text(r.backend)
      .Text(r.collective)
      .Text(r.dtype)
      .Text(r.redop)
      .Int(r.ranks)
      .Int(r.nodes)
      .Int(r.gpus_per_node)
      .Int(r.ranks_per_node)
      .TextArray(r.hosts)
      .Text(r.gpu_model)
      .Text(r.nccl_version)
      .Text(r.cuda_version)
      .Text(r.driver_version)
      .Text(r.mpi_version)
      .Text(r.nccl_tests_version)
      .Text(r.network)
      .TextArray(r.transports)
      .Bool(r.gdrdma)
      .Text(r.command_line)
      .JsonObject(r.nccl_env)
      .JsonObject(r.node_facts)
      .Text(r.slurm_job_id)
      .Text(r.slurm_step_id)
      .JsonObject(r.tags)
      .Text(r.sweep_id)
      .JsonObject(r.parameters)
      .Int(r.warmup_iters)
      .Int(r.iters)
      .Real(r.avg_busbw_gbps)
      .Bool(r.oob_ok)
      .Int(r.oob_count)
      .Text(r.link_straggler_host)
      .Text(r.source_file)
      .Text(r.content_hash)
      .Int(static_cast<int64_t>(r.table_index))
      .Text(std::string(RunStatusName(r.status)))
      .Int(r.machines)
      .Int(r.max_ranks_per_machine)
      .Int(r.cpus_per_machine);
  return row;
}

// Streams rows through COPY with an explicit column list. libpqxx 6.4's
// stream_to takes tuple-like rows only, so each row is a std::array of N fields.
template <size_t N, typename Items, typename Fill>
size_t CopyInto(pqxx::transaction_base& txn, const std::string& table,
                const std::array<std::string, N>& columns, const Items& items, Fill fill) {
  if (items.empty()) return 0;
  pqxx::stream_to stream(txn, table, columns);
  CopyRow row;
  std::array<CopyField, N> fields;
  for (const auto& item : items) {
    ThrowIfInterrupted();  // Ctrl-C: unwinding rolls the run's transaction back
    row.Clear();
    fill(row, item);
    if (row.fields().size() != N) {
      throw std::logic_error("COPY into " + table + ": row has " +
                             std::to_string(row.fields().size()) + " fields, table has " +
                             std::to_string(N) + " columns");
    }
    std::move(row.mutable_fields().begin(), row.mutable_fields().end(), fields.begin());
    stream << fields;
  }
  stream.complete();
  return items.size();
}

}  // namespace

const std::array<std::string, 31> kResultColumns = {"run_id",
                                                    "row_index",
                                                    "size_bytes",
                                                    "count",
                                                    "dtype",
                                                    "redop",
                                                    "root",
                                                    "oop_time_us",
                                                    "oop_algbw_gbps",
                                                    "oop_busbw_gbps",
                                                    "oop_wrong",
                                                    "oop_max_error",
                                                    "ip_time_us",
                                                    "ip_algbw_gbps",
                                                    "ip_busbw_gbps",
                                                    "ip_wrong",
                                                    "ip_max_error",
                                                    "lat_mean_us",
                                                    "lat_p50_us",
                                                    "lat_p90_us",
                                                    "lat_p99_us",
                                                    "lat_min_us",
                                                    "lat_max_us",
                                                    "lat_stddev_us",
                                                    "lat_cv",
                                                    "ip_lat_p50_us",
                                                    "ip_lat_p99_us",
                                                    "ip_lat_cv",
                                                    "straggler_host",
                                                    "straggler_rank",
                                                    "straggler_excess_us"};

void AppendResultFields(CopyRow& row, int64_t run_id, int row_index, const ResultRow& result) {
  const SizeRow& s = result.row;
  row.Int(run_id)
      .Int(static_cast<int64_t>(row_index))
      .Int(s.size_bytes)
      .Int(s.count)
      .Text(s.type)
      .Text(s.redop)
      .Int(s.root);
  for (const auto* m : {&s.oop, &s.ip}) {
    if (*m) {
      row.Real((*m)->time_us)
          .Real((*m)->algbw_gbps)
          .Real((*m)->busbw_gbps)
          .Int((*m)->wrong)
          .Real((*m)->max_error);
    } else {
      row.Null().Null().Null().Null().Null();
    }
  }
  // The summary as the run was built with it (ingest derives it from
  // nccl-tests' per-iteration columns, the harness measures it): written, not
  // derived, so a run stores the same values directly and through the spool.
  const LatencySummary& l = result.latency;
  row.Real(l.mean_us)
      .Real(l.p50_us)
      .Real(l.p90_us)
      .Real(l.p99_us)
      .Real(l.min_us)
      .Real(l.max_us)
      .Real(l.stddev_us)
      .Real(l.cv)
      .Real(l.ip_p50_us)
      .Real(l.ip_p99_us)
      .Real(l.ip_cv)
      .Text(l.straggler_host)
      .Int(l.straggler_rank)
      .Real(l.straggler_excess_us);
}

namespace {

size_t WriteResultRows(pqxx::transaction_base& txn, int64_t id, const RunRecord& run,
                       size_t first_row) {
  std::vector<ResultRow> results(run.results.begin() + std::min(first_row, run.results.size()),
                                 run.results.end());
  std::vector<LatencySample> samples;
  for (const LatencySample& s : run.latency_samples) {
    if (s.row_index >= static_cast<int>(first_row)) samples.push_back(s);
  }
  std::vector<RankTiming> timings;
  for (const RankTiming& t : run.rank_timings) {
    if (t.row_index >= static_cast<int>(first_row)) timings.push_back(t);
  }
  int index = static_cast<int>(first_row);
  size_t written = CopyInto<31>(
      txn, "run_results", kResultColumns, results,
      [&](CopyRow& row, const ResultRow& r) { AppendResultFields(row, id, index++, r); });
  CopyInto<5>(txn, "latency_samples",
              {{"run_id", "row_index", "in_place", "iteration", "latency_us"}}, samples,
              [&](CopyRow& row, const LatencySample& s) {
                row.Int(id)
                    .Int(static_cast<int64_t>(s.row_index))
                    .Bool(s.in_place)
                    .Int(static_cast<int64_t>(s.iteration))
                    .Real(s.latency_us);
              });
  CopyInto<10>(txn, "rank_timings",
               {{"run_id", "row_index", "in_place", "rank", "host", "mean_us", "p50_us", "p99_us",
                 "max_us", "lateness_us"}},
               timings, [&](CopyRow& row, const RankTiming& t) {
                 row.Int(id)
                     .Int(static_cast<int64_t>(t.row_index))
                     .Bool(t.in_place)
                     .Int(static_cast<int64_t>(t.rank))
                     .Text(t.host)
                     .Real(t.mean_us)
                     .Real(t.p50_us)
                     .Real(t.p99_us)
                     .Real(t.max_us)
                     .Real(t.lateness_us);
               });
  return written;
}

// Step mode's summary and per-step rows.
void WriteSteps(pqxx::transaction_base& txn, int64_t id, const RunRecord& run) {
  if (!run.step) return;
  const StepSummary& s = *run.step;
  CopyRow params;
  params.Int(id)
      .Int(s.model_params)
      .Text(s.grad_dtype)
      .Int(s.grad_bytes)
      .Int(s.bucket_bytes)
      .Int(static_cast<int64_t>(s.buckets))
      .Real(s.forward_ms)
      .Real(s.backward_ms)
      .Int(static_cast<int64_t>(s.steps))
      .Real(s.step_ms_p50)
      .Real(s.step_ms_p90)
      .Real(s.step_ms_p99)
      .Real(s.step_ms_max)
      .Real(s.step_ms_mean)
      .Real(s.compute_ms_p50)
      .Real(s.exposed_ms_p50)
      .Real(s.exposed_ms_p99)
      .Real(s.exposed_ms_mean)
      .Real(s.idle_share_p50)
      .Real(s.idle_share_mean);
  txn.exec_params0(
      "INSERT INTO step_results (run_id, model_params, grad_dtype, grad_bytes, bucket_bytes, "
      "buckets, forward_ms, backward_ms, steps, step_ms_p50, step_ms_p90, step_ms_p99, "
      "step_ms_max, step_ms_mean, compute_ms_p50, exposed_ms_p50, exposed_ms_p99, "
      "exposed_ms_mean, idle_share_p50, idle_share_mean) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, "
      "$9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20) ON CONFLICT (run_id) DO NOTHING",
      pqxx::prepare::make_dynamic_params(params.fields()));
  CopyInto<5>(txn, "step_samples", {{"run_id", "step", "step_ms", "compute_ms", "exposed_ms"}},
              run.step_samples, [&](CopyRow& row, const StepSample& x) {
                row.Int(id)
                    .Int(static_cast<int64_t>(x.step))
                    .Real(x.step_ms)
                    .Real(x.compute_ms)
                    .Real(x.exposed_ms);
              });
}

void WriteChildren(pqxx::transaction_base& txn, int64_t id, const RunRecord& run,
                   WriteRunResult* result) {
  WriteSteps(txn, id, run);
  CopyInto<8>(txn, "run_ranks",
              {{"run_id", "rank", "host", "local_rank", "pid", "device", "bus_id", "gpu_model"}},
              run.rank_devices, [&](CopyRow& row, const RankDevice& d) {
                row.Int(id)
                    .Int(static_cast<int64_t>(d.rank))
                    .Text(d.host)
                    .Null()
                    .Int(d.pid)
                    .Int(d.device)
                    .Text(d.bus_id)
                    .Text(d.gpu_model);
              });
  result->result_rows = WriteResultRows(txn, id, run, 0);
  CopyInto<7>(
      txn, "run_net_devices", {{"run_id", "host", "nic_index", "device", "port", "link", "sharp"}},
      run.net_devices, [&](CopyRow& row, const NetDevice& d) {
        row.Int(id).Text(d.host).Int(static_cast<int64_t>(d.index)).Text(d.name).Int(d.port);
        if (d.link.empty()) {
          row.Null();
        } else {
          row.Text(d.link);
        }
        row.Bool(d.sharp);
      });
  int event_seq = 0;
  CopyInto<6>(txn, "run_log_events", {{"run_id", "seq", "level", "line", "host", "text"}},
              run.log_events, [&](CopyRow& row, const LogMessage& m) {
                std::string level = m.level;
                for (char& c : level) c = static_cast<char>(std::tolower(c));
                row.Int(id).Int(static_cast<int64_t>(event_seq++)).Text(level);
                if (m.line > 0) {
                  row.Int(static_cast<int64_t>(m.line));
                } else {
                  row.Null();
                }
                if (m.host.empty()) {
                  row.Null();
                } else {
                  row.Text(m.host);
                }
                row.Text(m.text);
              });
  CopyInto<6>(txn, "link_probes", {{"run_id", "host_a", "host_b", "bytes", "seconds", "gbps"}},
              run.link_probes, [&](CopyRow& row, const LinkProbeResult& p) {
                row.Int(id).Text(p.host_a).Text(p.host_b).Int(p.bytes).Real(p.seconds).Real(p.gbps);
              });
  int seq = 0;
  result->channel_rows =
      CopyInto<12>(txn, "transport_observations",
                   {{"run_id", "seq", "host", "rank", "peer_rank", "channel", "conn_index",
                     "direction", "family", "detail", "nic_index", "gdrdma"}},
                   run.channels, [&](CopyRow& row, const ChannelObservation& c) {
                     row.Int(id).Int(static_cast<int64_t>(seq++));
                     if (c.host.empty()) {
                       row.Null();
                     } else {
                       row.Text(c.host);
                     }
                     row.Int(static_cast<int64_t>(c.from_rank))
                         .Int(static_cast<int64_t>(c.to_rank))
                         .Int(static_cast<int64_t>(c.channel))
                         .Int(c.conn_index)
                         .Text(c.direction)
                         .Text(c.family)
                         .Text(c.detail)
                         .Int(c.nic_index)
                         .Bool(c.gdrdma);
                   });
}

}  // namespace

void EnsureCluster(pqxx::transaction_base& txn, const std::string& cluster) {
  txn.exec_params("INSERT INTO clusters (name) VALUES ($1) ON CONFLICT (name) DO NOTHING", cluster);
}

namespace {

// The nodes' topology fingerprints as `fabtrack topology ingest` stored them
// at or before the run started, as the run's "topology" node fact
// (core/node_facts.h), unless the run brought its own.
void AddTopologyFact(pqxx::transaction_base& txn, int64_t run_id, const RunRecord& run) {
  if (run.hosts.empty() || run.node_facts.count("topology")) return;
  std::vector<std::pair<std::string, NodeFacts>> per_host;
  for (const pqxx::row& row : txn.exec_params(
           "SELECT DISTINCT ON (host) host, fingerprint FROM node_topologies "
           "WHERE cluster = $1 AND host = ANY($2::text[]) AND recorded_at <= $3::timestamptz "
           "ORDER BY host, recorded_at DESC, id DESC",
           run.cluster, PgTextArrayLiteral(run.hosts), run.started_at)) {
    per_host.push_back({row[0].as<std::string>(), {{"topology", row[1].as<std::string>()}}});
  }
  if (per_host.empty()) return;
  txn.exec_params(
      "UPDATE runs SET node_facts = node_facts || jsonb_build_object('topology', $2::text) "
      "WHERE id = $1",
      run_id, MergeNodeFacts(per_host).at("topology"));
}

}  // namespace

WriteRunResult WriteRun(pqxx::transaction_base& txn, const RunRecord& run) {
  static const std::string sql = RunInsertSql();
  EnsureCluster(txn, run.cluster);
  CopyRow params = RunParameters(run);
  pqxx::result inserted = txn.exec_params(sql, pqxx::prepare::make_dynamic_params(params.fields()));
  WriteRunResult result;
  if (inserted.empty()) {
    pqxx::row existing = txn.exec_params1(
        "SELECT id FROM runs WHERE cluster = $1 AND content_hash = $2 AND table_index = $3",
        run.cluster, run.content_hash, run.table_index);
    result.run_id = existing[0].as<int64_t>();
    return result;
  }
  result.inserted = true;
  result.run_id = inserted[0][0].as<int64_t>();
  AddTopologyFact(txn, result.run_id, run);
  WriteChildren(txn, result.run_id, run, &result);
  return result;
}

int64_t BeginRun(pqxx::transaction_base& txn, const RunRecord& run) {
  static const std::string sql = RunInsertSql();
  EnsureCluster(txn, run.cluster);
  CopyRow params = RunParameters(run);
  pqxx::result inserted = txn.exec_params(sql, pqxx::prepare::make_dynamic_params(params.fields()));
  if (inserted.empty()) {
    throw std::runtime_error("a run with content hash " + run.content_hash.substr(0, 12) +
                             " already exists in cluster " + run.cluster);
  }
  int64_t id = inserted[0][0].as<int64_t>();
  AddTopologyFact(txn, id, run);
  RunRecord metadata_only = run;
  metadata_only.results.clear();
  metadata_only.latency_samples.clear();
  metadata_only.rank_timings.clear();
  metadata_only.step.reset();  // known at the end (FinishRun)
  metadata_only.step_samples.clear();
  WriteRunResult ignored;
  WriteChildren(txn, id, metadata_only, &ignored);
  return id;
}

void AppendResults(pqxx::transaction_base& txn, int64_t run_id, const RunRecord& run,
                   size_t first_row) {
  WriteResultRows(txn, run_id, run, first_row);
}

void FinishRun(pqxx::transaction_base& txn, int64_t run_id, const RunRecord& run) {
  CopyRow params;
  params.Int(run_id)
      .Text(std::string(RunStatusName(run.status)))
      .Text(run.ended_at)
      .Real(run.avg_busbw_gbps)
      .Bool(run.oob_ok)
      .Int(run.oob_count);
  params.Text(run.network)
      .TextArray(run.transports)
      .Bool(run.gdrdma)
      .Text(run.nccl_version)
      .Text(run.link_straggler_host);
  txn.exec_params0(
      "UPDATE runs SET status = $2, ended_at = $3::timestamptz, avg_busbw_gbps = $4::float8, "
      "oob_ok = $5::boolean, oob_count = $6::bigint, network = coalesce($7, network), "
      "transports = CASE WHEN cardinality($8::text[]) > 0 THEN $8::text[] ELSE transports END, "
      "gdrdma = coalesce($9::boolean, gdrdma), nccl_version = coalesce($10, nccl_version), "
      "link_straggler_host = coalesce($11, link_straggler_host) WHERE id = $1::bigint",
      pqxx::prepare::make_dynamic_params(params.fields()));
  if (run.step && txn.exec_params1("SELECT count(*) FROM step_results WHERE run_id = $1", run_id)[0]
                          .as<int64_t>() == 0) {
    WriteSteps(txn, run_id, run);
  }
  // Transport evidence known only at the end (NCCL logs gathered from all
  // ranks after the sweep), unless BeginRun already had it.
  if (!run.net_devices.empty() || !run.channels.empty() || !run.link_probes.empty() ||
      !run.log_events.empty()) {
    pqxx::row existing = txn.exec_params1(
        "SELECT (SELECT count(*) FROM run_net_devices WHERE run_id = $1) + "
        "(SELECT count(*) FROM transport_observations WHERE run_id = $1) + "
        "(SELECT count(*) FROM link_probes WHERE run_id = $1) + "
        "(SELECT count(*) FROM run_log_events WHERE run_id = $1)",
        run_id);
    if (existing[0].as<int64_t>() == 0) {
      RunRecord evidence_only;
      evidence_only.net_devices = run.net_devices;
      evidence_only.channels = run.channels;
      evidence_only.link_probes = run.link_probes;
      evidence_only.log_events = run.log_events;
      WriteRunResult ignored;
      WriteChildren(txn, run_id, evidence_only, &ignored);
    }
  }
}

}  // namespace fabtrack::store
