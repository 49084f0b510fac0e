#include "collector/harness/run_metadata.h"

#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>

#include "collector/harness/harness_args.h"

extern char** environ;

namespace fabtrack::harness {
namespace {

std::string MpiLibraryVersion() {
  char version[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  MPI_Get_library_version(version, &length);
  std::string v(version, static_cast<size_t>(length));
  if (auto nl = v.find_first_of("\n,"); nl != std::string::npos) v.resize(nl);
  return v;
}

// Shortest text that reads back as the same number ("200", "12.5").
std::string FormatMs(double ms) {
  char text[32];
  std::snprintf(text, sizeof text, "%.17g", ms);
  for (int precision = 1; precision <= 17; ++precision) {
    std::snprintf(text, sizeof text, "%.*g", precision, ms);
    if (std::strtod(text, nullptr) == ms) break;
  }
  return text;
}

}  // namespace

RunRecord DescribeRun(const HarnessOptions& o, const std::vector<std::string>& hosts,
                      const BackendInfo& info, int argc, char** argv) {
  RunRecord run;
  run.cluster = o.cluster.value_or("");
  run.source = "fabtrack-allreduce";
  run.backend = o.backend;
  run.collective = "all_reduce";
  run.dtype = DataTypeName(o.dtype);
  run.redop = ReduceOpName(o.op);
  run.ranks = static_cast<int>(hosts.size());
  std::map<std::string, int> per_host;
  for (const auto& h : hosts) {
    if (per_host[h]++ == 0) run.hosts.push_back(h);
  }
  run.nodes = static_cast<int>(run.hosts.size());
  std::set<int> shapes;
  for (const auto& [h, n] : per_host) shapes.insert(n);
  if (shapes.size() == 1) {
    run.ranks_per_node = *shapes.begin();
    if (o.backend == "nccl") run.gpus_per_node = run.ranks_per_node;
  }
  if (o.backend == "nccl") {
    run.gpu_model = info.device;
    if (!info.nccl_version.empty()) run.nccl_version = info.nccl_version;
    if (!info.cuda_version.empty()) run.cuda_version = info.cuda_version;
    if (!info.driver_version.empty()) run.driver_version = info.driver_version;
  }
  run.mpi_version = MpiLibraryVersion();
  run.command_line = RecordedCommandLine(argc, argv);
  for (char** e = environ; e && *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    if (!eq) continue;
    std::string name(*e, static_cast<size_t>(eq - *e));
    if (IsRecordedEnvironmentVariable(name)) run.nccl_env[name] = eq + 1;
    if (name == "SLURM_JOB_ID") run.slurm_job_id = eq + 1;
    if (name == "SLURM_STEP_ID") run.slurm_step_id = eq + 1;
  }
  run.tags = o.tags;
  run.sweep_id = o.sweep_id;
  run.warmup_iters = o.warmup_iters;
  run.iters = o.iters;
  run.parameters["min_bytes"] = std::to_string(o.min_bytes);
  run.parameters["max_bytes"] = std::to_string(o.max_bytes);
  if (o.step_is_factor) {
    run.parameters["step_factor"] = std::to_string(o.step_factor);
  } else {
    run.parameters["step_bytes"] = std::to_string(o.step_bytes);
  }
  run.parameters["check"] = o.check ? "1" : "0";
  // Non-defaults only: a series' times are comparable across runs that agree.
  if (o.rank_time != RankTimeMode::kAverage) {
    run.parameters["average"] = std::to_string(static_cast<int>(o.rank_time));
  }
  if (o.cycles > 1) run.parameters["cycles"] = std::to_string(o.cycles);
  if (o.backend == "nccl") {
    // Back-to-back calls and per-call waits differ by NCCL's launch cost
    // (1-2.5 us): a series' small-message latency is only comparable within
    // one timing method.
    run.parameters["timing"] = o.timing.graph_launches > 0     ? "cudagraph"
                               : o.timing.blocking             ? "blocking"
                               : o.timing.per_iteration_events ? "back_to_back"
                                                               : "back_to_back_span";
    if (o.timing.graph_launches > 0) {
      run.parameters["cudagraph"] = std::to_string(o.timing.graph_launches);
    }
  }
  if (o.step) {
    // A series of its own: one "collective" per training-step shape.
    const StepOptions& s = *o.step;
    run.collective = "ddp_step";
    run.dtype = s.grad_dtype;
    run.warmup_iters = s.warmup_steps;
    run.iters = s.steps;
    run.parameters = {{"mode", "step"},
                      {"model_params", std::to_string(s.model_params)},
                      {"grad_dtype", s.grad_dtype},
                      {"bucket_bytes", std::to_string(s.bucket_bytes)},
                      {"forward_ms", FormatMs(s.forward_ms)},
                      {"backward_ms", FormatMs(s.backward_ms)},
                      {"max_buckets_in_flight", std::to_string(s.max_buckets_in_flight)}};
  }
  return run;
}

}  // namespace fabtrack::harness
