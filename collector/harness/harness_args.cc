#include "collector/harness/harness_args.h"

#include <CLI/CLI.hpp>
#include <iostream>

namespace fabtrack::harness {

std::string ParseHarnessArgs(int argc, const char* const* argv, HarnessOptions* o,
                             FaultInjection* fault, bool print_help, bool nccl_compiled) {
  CLI::App app{
      "fabtrack-allreduce: all-reduce sweep with per-iteration latency (nccl-tests flags)"};
  std::string min_bytes = "32M", max_bytes = "32M", step_bytes = "1M", dtype = "float", op = "sum";
  std::optional<int64_t> step_factor;
  int check = 1;
  std::vector<std::string> tags;
  std::optional<std::string> db, data_dir;
  app.add_option("-b,--minbytes", min_bytes, "smallest message (e.g. 8, 1K, 64M)");
  app.add_option("-e,--maxbytes", max_bytes, "largest message");
  app.add_option("-i,--stepbytes", step_bytes, "linear step between sizes");
  app.add_option("-f,--stepfactor", step_factor, "geometric step factor (overrides -i)");
  app.add_option("-n,--iters", o->iters, "timed iterations per size");
  app.add_option("-w,--warmup_iters", o->warmup_iters, "warmup iterations per size");
  app.add_option("-c,--check", check, "check results (#wrong): 1 or 0");
  int blocking = 0;
  app.add_option("-z,--blocking", blocking,
                 "nccl: 0 times calls launched back to back (nccl-tests' default), 1 waits for "
                 "each call (launch + completion latency)");
  int per_iteration = 1;
  app.add_option("-I,--per_iter_timing", per_iteration,
                 "nccl: 1 also times a loop with an event between calls for the per-call "
                 "distribution (p50/p99/cv%); 0 the mean alone");
  app.add_option("-G,--cudagraph", o->timing.graph_launches,
                 "nccl: capture the timed calls into a CUDA graph and launch it this many times");
  int average = 1;
  app.add_option("-a,--average", average,
                 "time reported over ranks: 0 rank 0, 1 average (default), 2 min, 3 max");
  app.add_option("-N,--run_cycles", o->cycles, "run and print the sweep this many times");
  app.add_option("-g,--ngpus", o->gpus_per_thread, "GPUs per process: 1 (one rank per GPU)");
  app.add_option("-t,--nthreads", o->threads, "threads per process: 1");
  app.add_option("-d,--datatype", dtype,
                 "float, double, int32, uint32, int64, uint64, int8, uint8"
                 " (nccl: also half, bfloat16)");
  app.add_option("-o,--op", op, "sum, prod, max, min (nccl: also avg)");
  app.add_option("--backend", o->backend, "mpi (host memory, MPI_Allreduce) or nccl (GPUs)");
  app.add_option("--cluster", o->cluster, "store the run in the database under this cluster");
  app.add_option("--db", db, "libpq conninfo (else FABTRACK_DB, PG*, embedded database)");
  app.add_option("--data-dir", data_dir, "embedded PostgreSQL directory");
  app.add_option("--output", o->output, "write the JSON result file (for `fabtrack ingest`)");
  app.add_option("--tag", tags, "free tag key=value (repeatable)");
  app.add_option("--sweep-id", o->sweep_id, "groups the runs of one sweep (set by fabtrack sweep)");
  app.add_option("--sysfs", o->sysfs,
                 "sysfs root the node facts (HCA firmware, link rates) are read from; {host} is "
                 "each node's host name (default /sys)");
  app.add_flag("-q,--quiet", o->quiet, "no table on stdout");
  std::string link_probe = "1M";
  app.add_option("--link-probe", link_probe,
                 "bytes each pair of nodes exchanges after the sweep to find a slow link (0: off)");
  // Step mode: a simulated data-parallel training step (see step_plan.h).
  bool step = false;
  StepOptions step_options;
  std::string model_params, bucket = "25M";
  app.add_flag("--step", step, "step mode: a data-parallel training step instead of a size sweep")
      ->group("Step mode");
  app.add_option("--model-params", model_params, "parameters of the model (7B, 350M, 70e9)")
      ->group("Step mode");
  app.add_option("--grad-dtype", step_options.grad_dtype, "gradient type: fp32, bf16, fp16")
      ->group("Step mode");
  app.add_option("--bucket", bucket, "gradient bucket size (DDP's bucket_cap_mb: 25M)")
      ->group("Step mode");
  app.add_option("--forward-ms", step_options.forward_ms, "forward pass compute time")
      ->group("Step mode");
  app.add_option("--backward-ms", step_options.backward_ms,
                 "backward pass compute time, over which the buckets fill")
      ->group("Step mode");
  app.add_option("--steps", step_options.steps, "measured steps")->group("Step mode");
  app.add_option("--warmup-steps", step_options.warmup_steps, "steps before measuring")
      ->group("Step mode");
  app.add_option("--max-buckets-in-flight", step_options.max_buckets_in_flight,
                 "MPI backend: bucket buffers in host memory")
      ->group("Step mode");
  app.add_option("--fault-exit-after-sizes", fault->exit_after_sizes)->group("");
  app.add_option("--fault-rank", fault->rank)->group("");
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp&) {
    if (print_help) std::cout << app.help();
    return "help";
  } catch (const CLI::ParseError& e) {
    return e.what();
  }
  auto size = [](const std::string& flag, const std::string& text, int64_t* out) -> std::string {
    auto v = ParseSize(text);
    if (!v) return flag + " " + text + ": not a size (use e.g. 8, 1K, 64M, 2G)";
    *out = *v;
    return "";
  };
  if (auto e = size("-b", min_bytes, &o->min_bytes); !e.empty()) return e;
  if (auto e = size("-e", max_bytes, &o->max_bytes); !e.empty()) return e;
  if (auto e = size("-i", step_bytes, &o->step_bytes); !e.empty()) return e;
  if (auto e = size("--link-probe", link_probe, &o->link_probe_bytes); !e.empty()) return e;
  if (o->link_probe_bytes > (int64_t{1} << 30)) return "--link-probe: at most 1G";
  if (step_factor) {
    o->step_is_factor = true;
    o->step_factor = *step_factor;
  }
  if (check != 0 && check != 1) return "-c " + std::to_string(check) + ": expected 0 or 1";
  o->check = check == 1;
  if (blocking != 0 && blocking != 1) return "-z " + std::to_string(blocking) + ": expected 0 or 1";
  o->timing.blocking = blocking == 1;
  if (per_iteration != 0 && per_iteration != 1) {
    return "-I " + std::to_string(per_iteration) + ": expected 0 or 1";
  }
  o->timing.per_iteration_events = per_iteration == 1;
  if (average < 0 || average > 3) {
    return "-a " + std::to_string(average) + ": expected 0 (rank 0), 1 (average), 2 (min), 3 (max)";
  }
  o->rank_time = static_cast<RankTimeMode>(average);
  auto t = ParseDataType(dtype);
  if (!t) return "-d " + dtype + ": unknown data type";
  o->dtype = *t;
  auto r = ParseReduceOp(op);
  if (!r) return "-o " + op + ": unknown reduction";
  o->op = *r;
  for (const auto& tag : tags) {
    auto eq = tag.find('=');
    if (eq == std::string::npos || eq == 0) return "--tag " + tag + ": expected key=value";
    o->tags[tag.substr(0, eq)] = tag.substr(eq + 1);
  }
  o->db = db;
  if (data_dir) o->tags["_data_dir"] = *data_dir;  // carried to the recorder below
  if (step) {
    if (!model_params.empty()) {
      auto params = ParseParameterCount(model_params);
      if (!params) return "--model-params " + model_params + ": not a parameter count (7B, 350M)";
      step_options.model_params = *params;
    }
    if (auto e = size("--bucket", bucket, &step_options.bucket_bytes); !e.empty()) return e;
    if (auto e = ValidateStep(step_options); !e.empty()) return e;
    o->step = step_options;
  } else if (!model_params.empty()) {
    return "--model-params: only with --step";
  }
  return Validate(*o, nccl_compiled);
}

std::string CheckHarnessArgs(const std::vector<std::string>& args, bool nccl_compiled) {
  std::vector<const char*> argv = {"fabtrack-allreduce"};
  for (const std::string& arg : args) argv.push_back(arg.c_str());
  HarnessOptions options;
  FaultInjection fault;
  std::string error = ParseHarnessArgs(static_cast<int>(argv.size()), argv.data(), &options, &fault,
                                       /*print_help=*/false, nccl_compiled);
  return error == "help" ? "" : error;
}

std::string RecordedCommandLine(int argc, const char* const* argv) {
  std::string out;
  bool conninfo_next = false;
  for (int i = 0; i < argc; ++i) {
    std::string a = argv[i];
    // A conninfo may carry a password, or a misspelt one: never recorded.
    if (conninfo_next) {
      a = "***";
    } else if (a.rfind("--db=", 0) == 0) {
      a = "--db=***";
    }
    conninfo_next = a == "--db";
    bool plain = !a.empty() && a.find_first_not_of(
                                   "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
                                   "-_./=:,+@%") == std::string::npos;
    if (!out.empty()) out += ' ';
    if (plain) {
      out += a;
    } else {
      out += '\'';
      for (char c : a) out += (c == '\'') ? std::string("'\\''") : std::string(1, c);
      out += '\'';
    }
  }
  return out;
}

}  // namespace fabtrack::harness
