// fabtrack-allreduce: all-reduce sweep in nccl-tests' vocabulary, with
// per-iteration latency per rank, stragglers, and results stored in
// PostgreSQL and/or a JSON result file. Launched by mpirun or srun.
#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <iostream>
#include <map>
#include <random>

#include "collector/counters/sysfs_ports.h"
#include "collector/harness/backend.h"
#include "collector/harness/harness_args.h"
#include "collector/harness/harness_options.h"
#include "collector/harness/latency_stats.h"
#include "collector/harness/link_probe.h"
#include "collector/harness/machine_placement.h"
#include "collector/harness/run_metadata.h"
#include "collector/harness/run_sink.h"
#include "collector/harness/table_printer.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/parse_file.h"
#include "core/bus_bandwidth.h"
#include "core/clock.h"
#include "core/content_hash.h"
#include "core/json_instances.h"
#include "core/node_facts.h"
#include "core/text.h"

namespace fabtrack::harness {
namespace {

constexpr int kExitUsage = 2;
constexpr int kExitDatabase = 3;
constexpr int kExitRunFailed = 1;

// Every rank's hostname, in rank order.
std::vector<std::string> GatherHostnames(int ranks) {
  char name[256] = {};
  gethostname(name, sizeof name - 1);
  std::vector<char> all(static_cast<size_t>(ranks) * 256);
  MPI_Allgather(name, 256, MPI_CHAR, all.data(), 256, MPI_CHAR, MPI_COMM_WORLD);
  std::vector<std::string> hosts;
  for (int r = 0; r < ranks; ++r) hosts.emplace_back(&all[static_cast<size_t>(r) * 256]);
  return hosts;
}

// Every rank's string, in rank order on rank 0 (empty elsewhere); any length.
// This node's facts as JSON text (every rank sends its own; ranks of one
// node agree), read under `sysfs` ("{host}" replaced by this host's name,
// so that a test's fake nodes each have their own tree).
std::string ThisNodeFactsJson(std::string sysfs) {
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  if (size_t at = sysfs.find("{host}"); at != std::string::npos) sysfs.replace(at, 6, host);
  HostPorts ports = ReadSysfsPorts(sysfs);
  ports.kernel_release = KernelRelease();
  return nlohmann::json(HostFactsFromPorts(ports)).dump();
}

std::vector<std::string> GatherStrings(const std::string& mine, int rank, int ranks) {
  int length = static_cast<int>(std::min<size_t>(mine.size(), 64u << 20));
  std::vector<int> lengths(rank == 0 ? ranks : 0);
  MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<int> offsets(lengths.size());
  int total = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = total;
    total += lengths[r];
  }
  std::vector<char> all(static_cast<size_t>(total) + 1);
  MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
              0, MPI_COMM_WORLD);
  std::vector<std::string> out;
  for (size_t r = 0; r < lengths.size(); ++r) out.emplace_back(&all[offsets[r]], lengths[r]);
  return out;
}

// NCCL's debug logs of every rank (NCCL backend), parsed with the project's
// parser: the transport each run really used (IB/RoCE/Socket, GDRDMA, NICs).
void AttachNcclEvidence(const std::vector<std::string>& logs, RunRecord* run) {
  NcclLogInfo merged;
  bool any = false;
  for (size_t r = 0; r < logs.size(); ++r) {
    if (logs[r].empty()) continue;
    ParsedFile parsed = ParseText(logs[r], "rank " + std::to_string(r));
    MergeNcclLog(&merged, parsed.log);
    any = true;
  }
  if (!any) return;
  ParsedFile all;
  all.log = merged;
  // The library's own answer (ncclGetVersion, set by DescribeRun) wins; the
  // log's banner is the fallback.
  if (merged.nccl_version && !run->nccl_version) run->nccl_version = merged.nccl_version;
  run->network = merged.network;
  run->transports = all.Transports();
  run->gdrdma = all.Gdrdma();
  run->net_devices = merged.net_devices;
  run->channels = merged.channels;
  run->log_events = KeptLogLines(merged);
}

// A barrier whose waiters sleep between polls: ranks sitting a probe round
// out leave the CPUs to the pair being timed (on a machine with fewer CPUs
// than ranks a spinning waiter would slow the pair down).
void SleepingBarrier() {
  MPI_Request request;
  MPI_Ibarrier(MPI_COMM_WORLD, &request);
  int done = 0;
  while (true) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (done) return;
    timespec pause{0, 50'000};
    nanosleep(&pause, nullptr);
  }
}

// Every node's leader (its first rank) exchanges `bytes` with every other
// leader, round-robin; rank 0 gets the pairs. Other ranks
// only keep step (a barrier per round keeps the pairs of a round disjoint).
std::vector<PairProbe> ProbeLinks(const std::vector<std::string>& hosts, int rank, int64_t bytes) {
  std::vector<std::string> nodes;
  std::vector<int> leader;
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (std::find(nodes.begin(), nodes.end(), hosts[r]) == nodes.end()) {
      nodes.push_back(hosts[r]);
      leader.push_back(static_cast<int>(r));
    }
  }
  const int n = static_cast<int>(nodes.size());
  const int rounds = RoundRobinRounds(n);
  int my_node = -1;
  for (int i = 0; i < n; ++i) {
    if (leader[i] == rank) my_node = i;
  }
  std::vector<char> send(static_cast<size_t>(bytes), 1), recv(static_cast<size_t>(bytes));
  // Per round: partner node and best seconds (or -1).
  std::vector<double> mine(static_cast<size_t>(rounds) * 2, -1.0);
  // Three passes over the schedule, three exchanges per meeting: a pair's
  // best of nine, taken at different moments, so one unlucky moment on a
  // busy host does not make a healthy link look slow.
  for (int pass = 0; pass < 3; ++pass) {
    for (int round = 0; round < rounds; ++round) {
      SleepingBarrier();
      if (my_node < 0) continue;
      int partner = RoundRobinPartner(n, round, my_node);
      if (partner < 0) continue;
      double best = mine[round * 2 + 1] > 0 ? mine[round * 2 + 1] : 1e30;
      for (int rep = 0; rep < 3; ++rep) {
        double start = MPI_Wtime();
        MPI_Sendrecv(send.data(), static_cast<int>(bytes), MPI_CHAR, leader[partner], 77,
                     recv.data(), static_cast<int>(bytes), MPI_CHAR, leader[partner], 77,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        best = std::min(best, MPI_Wtime() - start);
      }
      mine[round * 2] = partner;
      mine[round * 2 + 1] = best;
    }
  }
  int ranks = static_cast<int>(hosts.size());
  std::vector<double> all(rank == 0 ? mine.size() * ranks : 0);
  MPI_Gather(mine.data(), static_cast<int>(mine.size()), MPI_DOUBLE, all.data(),
             static_cast<int>(mine.size()), MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<PairProbe> probes;
  if (rank != 0) return probes;
  for (int i = 0; i < n; ++i) {
    for (int round = 0; round < rounds; ++round) {
      size_t at = static_cast<size_t>(leader[i]) * mine.size() + round * 2;
      int partner = static_cast<int>(all[at]);
      if (partner <= i) continue;  // each pair once, from its lower node
      double seconds = all[at + 1];
      probes.push_back({i, partner, seconds, 2.0 * bytes / seconds / 1e9});
    }
  }
  return probes;
}

struct Half {
  SizeLatency latency;
  int64_t wrong = 0;
};

// Times one placement (out-of-place or in-place) of one size on every rank;
// rank 0 gets everyone's durations.
Half MeasureHalf(AllReduceBackend& backend, const HarnessOptions& o, int64_t count, bool in_place,
                 int rank, int ranks) {
  backend.FillInputs(count, in_place);
  backend.Warmup(count, in_place, o.warmup_iters);
  MPI_Barrier(MPI_COMM_WORLD);
  // One sample per call, or per graph launch in graph mode; every rank has
  // the same options, so the same number of samples.
  AllReduceBackend::TimedRun timed = backend.RunTimed(count, in_place, o.iters);
  const std::vector<double>& mine = timed.samples_us;
  const int samples = static_cast<int>(mine.size());
  // nccl-tests' time: each rank's mean, combined over the ranks as -a says
  // (default: averaged).
  double mean_us = timed.mean_us.value_or(0);
  std::vector<double> rank_means(rank == 0 ? ranks : 0);
  MPI_Gather(&mean_us, 1, MPI_DOUBLE, rank_means.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  std::vector<double> all(rank == 0 ? static_cast<size_t>(samples) * ranks : 0);
  MPI_Gather(mine.data(), samples, MPI_DOUBLE, all.data(), samples, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int64_t wrong = 0;
  if (o.check) {
    // A fresh, untimed call on fresh inputs: timed iterations overwrite them.
    backend.FillInputs(count, in_place);
    backend.RunOnce(count, in_place);
    wrong = backend.CountWrong(count, in_place);
  }
  int64_t total_wrong = 0;
  MPI_Reduce(&wrong, &total_wrong, 1, MPI_INT64_T, MPI_SUM, 0, MPI_COMM_WORLD);
  Half half;
  half.wrong = total_wrong;
  if (rank == 0) {
    std::vector<std::vector<double>> durations(ranks);
    for (int r = 0; r < ranks; ++r) {
      durations[r].assign(all.begin() + static_cast<ptrdiff_t>(r) * samples,
                          all.begin() + static_cast<ptrdiff_t>(r + 1) * samples);
    }
    half.latency = AnalyzeLatencies(durations);
    if (!timed.mean_us) {
      // Calls timed one by one: each rank's mean is that of its samples.
      for (const RankSummary& rs : half.latency.ranks) rank_means[rs.rank] = rs.mean_us;
    }
    half.latency.time_us = CombineRankTimes(rank_means, o.rank_time);
  }
  return half;
}

// Records the run's end and names the stored run (`what` it holds: "12
// sizes"); false, having said why, when the sink cannot record it.
bool FinishRecording(RunSink& recorder, const RunRecord& run, const std::string& what, int ranks) {
  try {
    recorder.Finish(run);
  } catch (const std::exception& e) {
    std::cerr << "fabtrack-allreduce: cannot record the run's end: " << e.what() << "\n";
    return false;
  }
  if (recorder.run_id()) {
    std::cerr << "fabtrack-allreduce: stored run " << *recorder.run_id() << " (" << what << ", "
              << ranks << " ranks on " << run.nodes.value_or(0) << " nodes)\n";
  }
  return true;
}

// Step mode: warmup and measured steps on every rank, then rank 0 prints the
// summary in the table's style and records the run.
int RunStepMode(const HarnessOptions& o, AllReduceBackend& backend, RunRecord& run,
                std::unique_ptr<RunSink>& recorder, int rank, int ranks) {
  const StepOptions& s = *o.step;
  const std::vector<Bucket> buckets = PlanBuckets(s);
  if (rank == 0 && !o.quiet) {
    const int64_t grad_bytes = s.model_params * GradientElementSize(s.grad_dtype);
    std::cout << "# fabtrack-allreduce step mode: " << s.model_params << " parameters, "
              << s.grad_dtype << " gradients = " << grad_bytes << " bytes in " << buckets.size()
              << " buckets of " << s.bucket_bytes << " bytes\n"
              << "#  forward " << s.forward_ms << " ms, backward " << s.backward_ms << " ms; "
              << s.steps << " steps after " << s.warmup_steps << " warmup; " << ranks
              << " ranks on " << run.nodes.value_or(0) << " nodes\n";
    std::cout << "#  steps  step_p50  step_p99  compute  exposed_p50  exposed_p99  idle  "
                 "GPU-h/1000\n"
              << "#           (ms)      (ms)      (ms)       (ms)         (ms)      (%)   steps\n"
              << std::flush;
  }
  std::vector<StepSample> samples = backend.RunSteps(s, rank, ranks);
  // The transport of the step's all-reduces, as in a sweep.
  std::vector<std::string> logs = GatherStrings(backend.DebugLog(), rank, ranks);
  if (rank != 0) return 0;
  AttachNcclEvidence(logs, &run);
  run.step = SummarizeSteps(s, samples);
  run.step_samples = std::move(samples);
  const StepSummary& sum = *run.step;
  if (!o.quiet) {
    std::printf(
        "%8d %9s %9s %9s %12s %12s %5s %7s\n", sum.steps, FormatFixed(sum.step_ms_p50, 2).c_str(),
        FormatFixed(sum.step_ms_p99, 2).c_str(), FormatFixed(sum.compute_ms_p50, 2).c_str(),
        FormatFixed(sum.exposed_ms_p50, 2).c_str(), FormatFixed(sum.exposed_ms_p99, 2).c_str(),
        FormatFixed(sum.idle_share_p50 * 100, 1).c_str(),
        FormatFixed(LostGpuHoursPer1000Steps(sum.exposed_ms_p50, ranks), 3).c_str());
    std::fflush(stdout);
  }
  run.ended_at = UtcNowIso();
  run.status = RunStatus::kComplete;
  if (!FinishRecording(*recorder, run, std::to_string(sum.steps) + " steps", ranks)) {
    return kExitDatabase;
  }
  return 0;
}

}  // namespace

int RunHarness(int argc, char** argv, const RunSinkFactory& make_sink) {
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);

  HarnessOptions o;
  FaultInjection fault;
  std::string error = ParseHarnessArgs(argc, argv, &o, &fault, rank == 0, NcclBackendCompiled());
  if (error == "help") return 0;
  if (!error.empty()) {
    if (rank == 0) std::cerr << "fabtrack-allreduce: " << error << "\n";
    return kExitUsage;
  }
  std::optional<std::string> data_dir;
  if (auto it = o.tags.find("_data_dir"); it != o.tags.end()) {
    data_dir = it->second;
    o.tags.erase(it);
  }

  std::vector<std::string> hosts = GatherHostnames(ranks);
  RankPlacement placement{rank, ranks, 0};
  for (int r = 0; r < rank; ++r) placement.local_rank += hosts[r] == hosts[rank];

  std::unique_ptr<AllReduceBackend> backend;
  std::string backend_error;
  if (o.backend == "nccl") {
    backend = MakeNcclBackend(o, placement, &backend_error);
  } else {
    backend = MakeMpiBackend(o, placement);
  }
  int ok = backend != nullptr;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) {
    if (!backend) std::cerr << "fabtrack-allreduce: rank " << rank << ": " << backend_error << "\n";
    return kExitUsage;
  }
  const std::vector<int64_t> sizes = SweepSizes(o);
  try {
    backend->Prepare(sizes.empty() || o.step ? 0 : sizes.back());
    ok = 1;
  } catch (const std::exception& e) {
    std::cerr << "fabtrack-allreduce: rank " << rank << ": cannot allocate buffers: " << e.what()
              << "\n";
    ok = 0;
  }
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!ok) return kExitRunFailed;

  // Per-rank facts for the device lines.
  long long pid = getpid();
  std::vector<long long> pids(ranks);
  MPI_Gather(&pid, 1, MPI_LONG_LONG, pids.data(), 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD);
  BackendInfo info = backend->Info();
  int device = info.device_index;
  std::vector<int> devices(ranks);
  MPI_Gather(&device, 1, MPI_INT, devices.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  std::vector<std::string> bus_ids = GatherStrings(info.bus_id, rank, ranks);
  std::vector<std::string> boot_ids = GatherStrings(ReadBootId(), rank, ranks);
  // Each node's firmware, links and kernel (core/node_facts.h), so that a run
  // launched without `fabtrack sweep` records them too.
  std::vector<std::string> facts_texts = GatherStrings(ThisNodeFactsJson(o.sysfs), rank, ranks);
  std::vector<std::string> cpu_lists = GatherStrings(CpuListText(UsableCpus()), rank, ranks);
  std::vector<std::string> models = GatherStrings(info.device, rank, ranks);

  const std::string program = "fabtrack-allreduce";
  RunRecord run;
  std::unique_ptr<RunSink> recorder;
  if (rank == 0) {
    run = DescribeRun(o, hosts, info, argc, argv);
    std::vector<std::vector<int>> cpus;
    for (const std::string& list : cpu_lists) cpus.push_back(ParseCpuList(list));
    const MachinePlacement machines = PlaceOnMachines(boot_ids, cpus);
    run.machines = machines.machines;
    run.max_ranks_per_machine = machines.max_ranks_per_machine;
    run.cpus_per_machine = machines.cpus_per_machine;
    std::vector<std::pair<std::string, NodeFacts>> per_host;
    for (int r = 0; r < ranks; ++r) {
      const nlohmann::json facts = nlohmann::json::parse(facts_texts[r], nullptr, false);
      if (facts.is_object()) per_host.push_back({hosts[r], facts.get<NodeFacts>()});
    }
    run.node_facts = MergeNodeFacts(per_host);
    run.started_at = UtcNowIso();
    std::random_device rd;
    run.content_hash = Sha256Hex(run.started_at + std::to_string(pid) + std::to_string(rd()) +
                                 run.command_line.value_or(""));
    for (int r = 0; r < ranks; ++r) {
      run.rank_devices.push_back({r, 0, pids[r], hosts[r], devices[r], bus_ids[r], models[r]});
    }
    std::optional<DatabaseChoice> database;
    if (o.cluster) database = DatabaseChoice{o.db, data_dir};
    recorder = make_sink(database, o.output, std::cerr);
    ok = 1;
    try {
      recorder->Connect();
      run.status = RunStatus::kPartial;
      recorder->Begin(run);
    } catch (const std::exception& e) {
      std::cerr << "fabtrack-allreduce: " << e.what() << "\n";
      ok = 0;
    }
  }
  MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
  if (!ok) return kExitDatabase;
  if (o.step) return RunStepMode(o, *backend, run, recorder, rank, ranks);

  if (rank == 0 && !o.quiet) {
    TestParameters p;
    p.threads = 1;
    p.gpus_per_thread = 1;
    p.min_bytes = o.min_bytes;
    p.max_bytes = o.max_bytes;
    if (o.step_is_factor) {
      p.step_factor = o.step_factor;
    } else {
      p.step_bytes = o.step_bytes;
    }
    p.warmup_iters = o.warmup_iters;
    p.iters = o.iters;
    p.validation = o.check ? 1 : 0;
    p.graph = o.timing.graph_launches;
    for (const auto& line : HeaderLines(p, run.rank_devices, program)) std::cout << line << "\n";
    if (run.max_ranks_per_machine > run.cpus_per_machine) {
      std::cout << "#  Oversubscribed: " << *run.max_ranks_per_machine << " ranks on "
                << *run.cpus_per_machine
                << " CPUs of one machine; small-message latency times the scheduler\n";
    }
    std::cout << ColumnHeaderLines() << std::endl;
  }

  const double factor = BusBandwidthFactor("all_reduce", ranks).value_or(1.0);
  const int width = DataTypeSize(o.dtype);
  double busbw_sum = 0;
  int busbw_count = 0;
  int64_t out_of_bounds = 0;
  // nccl-tests -N: the sweep again and again, every cycle's rows printed in
  // the one table as nccl-tests does; the run keeps the last cycle (the
  // earlier ones warmed the fabric up).
  for (int cycle = 0; cycle < o.cycles; ++cycle) {
    const bool recorded = cycle == o.cycles - 1;
    for (size_t s = 0; s < sizes.size(); ++s) {
      if (fault.exit_after_sizes >= 0 && static_cast<int>(s) == fault.exit_after_sizes &&
          rank == fault.rank) {
        std::cerr << "fabtrack-allreduce: rank " << rank << ": fault injection: exiting\n";
        std::_Exit(9);
      }
      const int64_t bytes = sizes[s];
      const int64_t count = bytes / width;
      Half halves[2];
      for (int in_place = 0; in_place < 2; ++in_place) {
        halves[in_place] = MeasureHalf(*backend, o, count, in_place == 1, rank, ranks);
      }
      if (rank != 0) continue;
      ResultRow row;
      row.row.size_bytes = bytes;
      row.row.count = count;
      row.row.type = DataTypeName(o.dtype);
      row.row.redop = ReduceOpName(o.op);
      row.row.root = -1;
      TableHalf table[2];
      for (int h = 0; h < 2; ++h) {
        const SizeLatency& l = halves[h].latency;
        Measurement m;
        m.time_us = l.time_us;
        m.algbw_gbps = l.time_us > 0 ? bytes / l.time_us / 1e3 : 0.0;
        m.busbw_gbps = *m.algbw_gbps * factor;
        if (o.check) m.wrong = halves[h].wrong;
        m.iter_min_us = l.collective.min;
        m.iter_max_us = l.collective.max;
        m.iter_p50_us = l.collective.p50;
        m.iter_p99_us = l.collective.p99;
        m.iter_cv_pct = l.collective.cv * 100.0;
        (h == 0 ? row.row.oop : row.row.ip) = m;
        table[h] = {*m.time_us,       *m.algbw_gbps,    *m.busbw_gbps,  m.wrong,
                    l.collective.p50, l.collective.p99, l.collective.cv};
        if (!recorded) continue;
        busbw_sum += *m.busbw_gbps;
        ++busbw_count;
        out_of_bounds += halves[h].wrong;
        const int row_index = static_cast<int>(run.results.size());
        for (size_t i = 0; i < l.per_iteration_us.size(); ++i) {
          run.latency_samples.push_back(
              {row_index, h == 1, static_cast<int>(i), l.per_iteration_us[i]});
        }
        for (const RankSummary& rs : l.ranks) {
          run.rank_timings.push_back({row_index, h == 1, rs.rank, hosts[rs.rank], rs.mean_us,
                                      rs.p50_us, rs.p99_us, rs.max_us, rs.mean_lateness_us});
        }
      }
      const SizeLatency& oop = halves[0].latency;
      LatencySummary& sum = row.latency;
      sum.mean_us = oop.collective.mean;
      sum.p50_us = oop.collective.p50;
      sum.p90_us = oop.collective.p90;
      sum.p99_us = oop.collective.p99;
      sum.min_us = oop.collective.min;
      sum.max_us = oop.collective.max;
      sum.stddev_us = oop.collective.stddev;
      sum.cv = oop.collective.cv;
      sum.ip_p50_us = halves[1].latency.collective.p50;
      sum.ip_p99_us = halves[1].latency.collective.p99;
      sum.ip_cv = halves[1].latency.collective.cv;
      if (oop.straggler_rank) {
        sum.straggler_rank = oop.straggler_rank;
        sum.straggler_host = hosts[*oop.straggler_rank];
        sum.straggler_excess_us = oop.straggler_excess_us;
      }
      if (!o.quiet) {
        std::cout << RowLine(bytes, count, *row.row.type, *row.row.redop, table[0], table[1])
                  << std::endl;
      }
      if (!recorded) continue;
      const size_t first_new = run.results.size();
      run.results.push_back(row);
      try {
        recorder->Update(run, first_new);
      } catch (const std::exception& e) {
        std::cerr << "fabtrack-allreduce: cannot record size " << bytes << ": " << e.what() << "\n";
      }
    }
  }  // cycles
  if (o.link_probe_bytes > 0) {
    std::vector<PairProbe> probes = ProbeLinks(hosts, rank, o.link_probe_bytes);
    // A slow link must stay slow on a second probe: on a busy host one
    // unlucky pass can halve a healthy pair's best.
    int suspect = 0;
    if (rank == 0 && !probes.empty()) {
      suspect = JudgeLinks(static_cast<int>(run.hosts.size()), probes).slow_node.has_value();
    }
    MPI_Bcast(&suspect, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (suspect) {
      std::vector<PairProbe> again = ProbeLinks(hosts, rank, o.link_probe_bytes);
      if (rank == 0) probes = BestOfProbes(probes, again);
    }
    if (rank == 0 && !probes.empty()) {
      std::vector<std::string> nodes = run.hosts;
      for (const PairProbe& p : probes) {
        run.link_probes.push_back(
            {nodes[p.node_a], nodes[p.node_b], o.link_probe_bytes, p.seconds, p.gbps});
      }
      LinkVerdict verdict = JudgeLinks(static_cast<int>(nodes.size()), probes);
      if (verdict.slow_node) {
        run.link_straggler_host = nodes[*verdict.slow_node];
        if (!o.quiet) {
          std::cout << "# Link probe: " << *run.link_straggler_host << " is slow ("
                    << static_cast<int>(verdict.slow_ratio * 100)
                    << "% of the other nodes' point-to-point bandwidth)\n";
        }
      }
    }
  }
  std::vector<std::string> logs = GatherStrings(backend->DebugLog(), rank, ranks);
  if (rank != 0) return 0;

  AttachNcclEvidence(logs, &run);
  run.avg_busbw_gbps = busbw_count ? busbw_sum / busbw_count : 0.0;
  run.oob_count = out_of_bounds;
  run.oob_ok = out_of_bounds == 0;
  run.ended_at = UtcNowIso();
  run.status = out_of_bounds == 0 ? RunStatus::kComplete : RunStatus::kFailed;
  if (!o.quiet) {
    for (const auto& line : TrailerLines(out_of_bounds, *run.avg_busbw_gbps, program)) {
      std::cout << line << "\n";
    }

    std::cout.flush();
  }
  if (!FinishRecording(*recorder, run, std::to_string(sizes.size()) + " sizes", ranks)) {
    return kExitDatabase;
  }
  return out_of_bounds == 0 ? 0 : kExitRunFailed;
}

}  // namespace fabtrack::harness
