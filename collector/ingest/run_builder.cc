#include "collector/ingest/run_builder.h"

#include <algorithm>
#include <map>
#include <set>

#include "collector/ingest/node_count.h"

namespace fabtrack {
namespace {

std::vector<std::string> DistinctHosts(const TestTable& table, const NcclLogInfo& log) {
  std::vector<std::string> hosts = table.hosts;
  if (hosts.empty()) hosts = log.hosts;
  std::vector<std::string> out;
  std::set<std::string> seen;
  for (const auto& h : hosts) {
    if (!h.empty() && seen.insert(h).second) out.push_back(h);
  }
  return out;
}

void AttachLogEvidence(const ParsedFile& parsed, RunRecord* run) {
  run->nccl_version = parsed.log.nccl_version;
  run->cuda_version = parsed.log.cuda_version;
  run->network = parsed.log.network;
  run->transports = parsed.Transports();
  run->gdrdma = parsed.Gdrdma();
  run->net_devices = parsed.log.net_devices;
  run->channels = parsed.log.channels;
  run->log_events = KeptLogLines(parsed.log);
  if (!run->driver_version) run->driver_version = parsed.log.cuda_driver_version;
  // What NCCL says it read from the environment; a value captured from the
  // environment itself (nccl-tests JSON "env") is the one that was set.
  for (const auto& [name, value] : parsed.log.env_settings) {
    if (IsRecordedEnvironmentVariable(name)) run->nccl_env.emplace(name, value);
  }
  if (parsed.log.net_plugin) run->parameters["net_plugin"] = *parsed.log.net_plugin;
}

// Nodes from the strongest evidence (collector/ingest/node_count.h); where the
// count came from is kept with the run's parameters, so a reader can weigh a
// count guessed from host names against NCCL's own.
void SetNodeShape(const IngestOptions& options, const TestTable* table, const NcclLogInfo& log,
                  const std::map<std::string, std::string>& env, RunRecord* run) {
  NodeCount count = DecideNodeCount(table, log, env, options.nodes);
  run->nodes = count.nodes;
  if (!count.source.empty()) run->parameters["node_count_source"] = count.source;
  if (count.ranks_per_node && !options.nodes) {
    run->ranks_per_node = count.ranks_per_node;
  } else if (run->ranks && run->nodes && *run->nodes > 0 && *run->ranks % *run->nodes == 0) {
    run->ranks_per_node = *run->ranks / *run->nodes;
  }
}

std::optional<int> TypeSize(const std::string& type) {
  static const std::map<std::string, int> sizes = {
      {"int8", 1},     {"uint8", 1},   {"char", 1},   {"f8e4m3", 1}, {"f8e5m2", 1}, {"half", 2},
      {"bfloat16", 2}, {"float16", 2}, {"int32", 4},  {"uint32", 4}, {"int", 4},    {"float", 4},
      {"float32", 4},  {"int64", 8},   {"uint64", 8}, {"double", 8}, {"float64", 8}};
  auto it = sizes.find(type);
  if (it == sizes.end()) return std::nullopt;
  return it->second;
}

}  // namespace

LatencySummary LatencyFromIterationColumns(const SizeRow& row) {
  LatencySummary l;
  if (row.oop) {
    l.p50_us = row.oop->iter_p50_us;
    l.p99_us = row.oop->iter_p99_us;
    l.min_us = row.oop->iter_min_us;
    l.max_us = row.oop->iter_max_us;
    if (row.oop->iter_cv_pct) l.cv = *row.oop->iter_cv_pct / 100.0;
  }
  if (row.ip) {
    l.ip_p50_us = row.ip->iter_p50_us;
    l.ip_p99_us = row.ip->iter_p99_us;
    if (row.ip->iter_cv_pct) l.ip_cv = *row.ip->iter_cv_pct / 100.0;
  }
  return l;
}

std::optional<std::string> InferCollective(const TestTable& table) {
  // Old nccl-tests outputs do not name the program; the row shape does:
  // bytes = count * typesize for all_reduce/broadcast/reduce, and
  // count * typesize * ranks for all_gather/reduce_scatter.
  if (!table.ranks || *table.ranks < 1) return std::nullopt;
  bool has_redop = false, has_root = false, per_rank = false, whole = false;
  for (const SizeRow& r : table.rows) {
    if (!r.count || *r.count == 0 || !r.type) continue;
    std::optional<int> width = TypeSize(*r.type);
    if (!width) return std::nullopt;
    if (r.redop) has_redop = true;
    if (r.root && *r.root >= 0) has_root = true;
    if (r.size_bytes == *r.count * *width) whole = true;
    if (*table.ranks > 1 && r.size_bytes == *r.count * *width * *table.ranks) per_rank = true;
  }
  if (whole == per_rank) return std::nullopt;  // no rows, or ambiguous
  if (has_root) {
    if (!whole) return std::nullopt;
    return has_redop ? "reduce" : "broadcast";
  }
  if (whole) return has_redop ? std::optional<std::string>("all_reduce") : std::nullopt;
  return has_redop ? "reduce_scatter" : "all_gather";
}

std::vector<RunRecord> BuildRunRecords(const ParsedFile& parsed, const SourceFacts& source,
                                       const IngestOptions& options) {
  std::vector<RunRecord> runs;
  for (size_t i = 0; i < parsed.tests.size(); ++i) {
    const TestTable& t = parsed.tests[i];
    RunRecord run;
    run.cluster = options.cluster;
    run.source = "nccl-tests";
    run.collective = t.collective;
    run.ranks = t.ranks;
    if (!run.collective) {
      run.collective = InferCollective(t);
      if (run.collective) run.parameters["collective_inferred"] = "true";
    }
    run.hosts = DistinctHosts(t, parsed.log);
    run.results.reserve(t.rows.size());
    for (const SizeRow& r : t.rows) {
      if (!run.dtype && r.type) run.dtype = r.type;
      if (!run.redop && r.redop) run.redop = r.redop;
      run.results.push_back({r, LatencyFromIterationColumns(r)});
    }
    run.rank_devices = t.devices;
    if (!t.devices.empty()) run.gpu_model = t.devices.front().gpu_model;
    if (!run.ranks && parsed.log.nranks) run.ranks = parsed.log.nranks;
    if (t.parameters.threads && t.parameters.gpus_per_thread && run.hosts.size() == 1) {
      // One process driving several GPUs (-g 8): GPUs per node is known.
      run.gpus_per_node = *t.parameters.threads * *t.parameters.gpus_per_thread;
    }
    SetNodeShape(options, &t, parsed.log, t.environment, &run);
    if (!run.gpus_per_node && run.ranks_per_node) run.gpus_per_node = run.ranks_per_node;
    run.nccl_tests_version = t.nccl_tests_version;
    run.warmup_iters = t.parameters.warmup_iters;
    run.iters = t.parameters.iters;
    auto param = [&](const char* key, const auto& v) {
      if (v) run.parameters[key] = std::to_string(*v);
    };
    param("min_bytes", t.parameters.min_bytes);
    param("max_bytes", t.parameters.max_bytes);
    param("step_bytes", t.parameters.step_bytes);
    param("step_factor", t.parameters.step_factor);
    param("agg_iters", t.parameters.agg_iters);
    param("validation", t.parameters.validation);
    param("graph", t.parameters.graph);
    param("threads", t.parameters.threads);
    param("gpus_per_thread", t.parameters.gpus_per_thread);
    run.avg_busbw_gbps = t.avg_busbw;
    run.oob_ok = t.oob_ok;
    run.oob_count = t.oob_count;
    if (!t.command_args.empty()) {
      std::string cmd;
      for (const auto& a : t.command_args) cmd += (cmd.empty() ? "" : " ") + a;
      run.command_line = cmd;
    }
    for (const auto& [k, v] : t.environment) {
      if (IsRecordedEnvironmentVariable(k)) run.nccl_env[k] = v;
    }
    if (auto it = t.environment.find("SLURM_JOB_ID"); it != t.environment.end()) {
      run.slurm_job_id = it->second;
    }
    if (auto it = t.environment.find("SLURM_STEP_ID"); it != t.environment.end()) {
      run.slurm_step_id = it->second;
    }
    AttachLogEvidence(parsed, &run);
    run.started_at = options.at ? *options.at : source.modified_at;
    if (!options.at && t.started_at) {
      // nccl-tests JSON prints local time without zone; it is the best
      // evidence of when the run happened, taken as UTC.
      if (auto ts = NormalizeTimestamp(*t.started_at)) run.started_at = *ts;
    }
    run.tags = options.tags;
    run.source_file = source.path;
    run.content_hash = source.content_hash;
    run.table_index = static_cast<int>(i);
    if (!t.complete) {
      run.status = t.rows.empty() ? RunStatus::kFailed : RunStatus::kPartial;
    } else if (t.oob_ok && !*t.oob_ok) {
      // Wrong results: the numbers are real but the run failed validation.
      run.status = RunStatus::kFailed;
    }
    runs.push_back(std::move(run));
  }
  if (runs.empty() && parsed.log.info_lines > 0) {
    RunRecord run;
    run.cluster = options.cluster;
    run.source = "nccl-log";
    run.hosts = parsed.log.hosts;
    run.ranks = parsed.log.nranks;
    SetNodeShape(options, nullptr, parsed.log, {}, &run);
    AttachLogEvidence(parsed, &run);
    run.started_at = options.at ? *options.at : source.modified_at;
    run.tags = options.tags;
    run.source_file = source.path;
    run.content_hash = source.content_hash;
    runs.push_back(std::move(run));
  }
  return runs;
}

}  // namespace fabtrack
