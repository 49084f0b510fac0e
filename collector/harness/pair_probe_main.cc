// fabtrack-pairprobe --pairs a:b,c:d [-b 256K] [--stream-ms 100] [--reps 3] [--latency-iters 200]
//                    --output FILE
// One round of `fabtrack locate`'s point-to-point probes (pair_probe.h):
// run it with one rank per node over exactly the hosts of the pairs.
// Exit 0: measured; 1: the ranks are not the pairs' hosts; 2: bad flags.
#include <mpi.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <vector>

#include "collector/harness/harness_options.h"
#include "collector/harness/pair_probe.h"
#include "core/atomic_file.h"

namespace {

using fabtrack::harness::OneWayProbe;
using fabtrack::harness::PairProbeResults;
using fabtrack::harness::ProbePair;

constexpr int kTag = 91;
constexpr int kStopTag = 92;

// Bytes per second from rank `sender` to the other rank of the pair
// communicator: messages of `bytes` for `seconds` (so a slow link costs no
// more time than a fast one), a zero-byte stop, then a one-byte answer.
double StreamOnce(MPI_Comm pair, int me, int sender, std::vector<char>& buf, double seconds) {
  const int peer = 1 - me;
  char ack = 0;
  double moved = 0;
  MPI_Barrier(pair);
  const double start = MPI_Wtime();
  if (me == sender) {
    do {
      MPI_Send(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, peer, kTag, pair);
    } while (MPI_Wtime() - start < seconds);
    MPI_Send(&ack, 0, MPI_CHAR, peer, kStopTag, pair);
    MPI_Recv(&moved, 1, MPI_DOUBLE, peer, kTag, pair, MPI_STATUS_IGNORE);
  } else {
    for (;;) {
      MPI_Status status;
      MPI_Recv(buf.data(), static_cast<int>(buf.size()), MPI_CHAR, peer, MPI_ANY_TAG, pair,
               &status);
      if (status.MPI_TAG == kStopTag) break;
      int count = 0;
      MPI_Get_count(&status, MPI_CHAR, &count);
      moved += count;
    }
    MPI_Send(&moved, 1, MPI_DOUBLE, peer, kTag, pair);
  }
  const double elapsed = MPI_Wtime() - start;
  return elapsed > 0 ? moved / elapsed : 0;
}

// A barrier that sleeps while it waits: ranks with nothing to measure leave
// the CPUs to those that do (on one machine the "nodes" share them).
void QuietBarrier(MPI_Comm comm) {
  MPI_Request request;
  MPI_Ibarrier(comm, &request);
  for (int done = 0; !done;) {
    MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (!done) usleep(200);
  }
}

// Half the mean 8-byte round trip, in microseconds.
double PingPong(MPI_Comm pair, int me, int iters) {
  char msg[8] = {};
  const int peer = 1 - me;
  MPI_Barrier(pair);
  const double start = MPI_Wtime();
  for (int i = 0; i < iters; ++i) {
    if (me == 0) {
      MPI_Send(msg, 8, MPI_CHAR, peer, kTag, pair);
      MPI_Recv(msg, 8, MPI_CHAR, peer, kTag, pair, MPI_STATUS_IGNORE);
    } else {
      MPI_Recv(msg, 8, MPI_CHAR, peer, kTag, pair, MPI_STATUS_IGNORE);
      MPI_Send(msg, 8, MPI_CHAR, peer, kTag, pair);
    }
  }
  return (MPI_Wtime() - start) / iters / 2 * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  CLI::App app{"fabtrack-pairprobe: one-way bandwidth and latency of node pairs, all at once"};
  std::string pairs_text, bytes_text = "256K", output;
  int reps = 3, latency_iters = 200;
  double stream_ms = 100;
  bool one_at_a_time = false;
  app.add_option("--pairs", pairs_text, "host pairs a:b,c:d (one rank per host)")->required();
  app.add_option("-b,--bytes", bytes_text, "large-message size (default 256K)");
  app.add_option("--stream-ms", stream_ms, "length of one bandwidth measurement (default 100)")
      ->check(CLI::Range(1.0, 60000.0));
  app.add_option("--reps", reps, "measurements of each kind, best kept (default 3)")
      ->check(CLI::Range(1, 100));
  app.add_option("--latency-iters", latency_iters, "8-byte round trips (default 200)")
      ->check(CLI::Range(1, 1000000));
  app.add_option("--output", output, "result file (written by rank 0)")->required();
  app.add_flag("--one-at-a-time", one_at_a_time,
               "measure the pairs one after another, the others sleeping (nodes that share "
               "CPUs, as scripts/netns-fabric.sh's)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);
    MPI_Finalize();
    return 2;
  }
  auto pairs = fabtrack::harness::ParseProbePairs(pairs_text);
  auto bytes = fabtrack::harness::ParseSize(bytes_text);
  if (!pairs || !bytes || *bytes < 1 || *bytes > (int64_t{1} << 30)) {
    if (rank == 0) std::cerr << "fabtrack-pairprobe: bad --pairs or --bytes\n";
    MPI_Finalize();
    return 2;
  }

  // Who is where: every rank's host, to every rank.
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int len = 0;
  MPI_Get_processor_name(name, &len);
  std::vector<char> all(static_cast<size_t>(size) * MPI_MAX_PROCESSOR_NAME);
  MPI_Allgather(name, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, all.data(), MPI_MAX_PROCESSOR_NAME,
                MPI_CHAR, MPI_COMM_WORLD);
  auto host_of = [&](int r) {
    return std::string(&all[static_cast<size_t>(r) * MPI_MAX_PROCESSOR_NAME]);
  };
  // The rank of each pair end: the first rank on that host.
  std::vector<std::pair<int, int>> ranks;
  std::string problem;
  for (const ProbePair& p : *pairs) {
    int ra = -1, rb = -1;
    for (int r = 0; r < size; ++r) {
      if (ra < 0 && fabtrack::harness::SameHost(host_of(r), p.a)) ra = r;
      if (rb < 0 && fabtrack::harness::SameHost(host_of(r), p.b)) rb = r;
    }
    if (ra < 0 || rb < 0) problem += " " + (ra < 0 ? p.a : p.b);
    ranks.push_back({ra, rb});
  }
  if (!problem.empty()) {
    if (rank == 0) {
      std::cerr << "fabtrack-pairprobe: no rank on host(s)" << problem << "; ranks run on";
      for (int r = 0; r < size; ++r) std::cerr << " " << host_of(r);
      std::cerr << "\n";
    }
    MPI_Finalize();
    return 1;
  }
  int color = MPI_UNDEFINED, key = 0;
  for (size_t i = 0; i < ranks.size(); ++i) {
    if (ranks[i].first == rank) color = static_cast<int>(i), key = 0;
    if (ranks[i].second == rank) color = static_cast<int>(i), key = 1;
  }
  MPI_Comm pair = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, color, key, &pair);

  // mine: a -> b bytes/s, b -> a bytes/s, latency us (kept by the pair's rank 0).
  // All pairs at once, or one slot per pair with --one-at-a-time; phases
  // of a slot are separated by barriers of all ranks.
  double mine[3] = {0, 0, 0};
  std::vector<char> buf(static_cast<size_t>(*bytes), 'f');
  const int slots = one_at_a_time ? static_cast<int>(pairs->size()) : 1;
  for (int slot = 0; slot < slots; ++slot) {
    const bool active = pair != MPI_COMM_NULL && (!one_at_a_time || color == slot);
    int me = 0;
    if (active) MPI_Comm_rank(pair, &me);
    for (int direction = 0; direction < 2; ++direction) {
      for (int rep = 0; rep < reps; ++rep) {
        QuietBarrier(MPI_COMM_WORLD);
        if (!active) continue;
        if (rep == 0) StreamOnce(pair, me, direction, buf, 0);  // warm-up: connections, buffers
        mine[direction] =
            std::max(mine[direction], StreamOnce(pair, me, direction, buf, stream_ms / 1000));
      }
    }
    QuietBarrier(MPI_COMM_WORLD);
    if (active) {
      PingPong(pair, me, std::min(latency_iters, 10));  // warm-up
      mine[2] = PingPong(pair, me, latency_iters);
      for (int rep = 1; rep < reps; ++rep)
        mine[2] = std::min(mine[2], PingPong(pair, me, latency_iters));
    }
  }
  QuietBarrier(MPI_COMM_WORLD);
  std::vector<double> gathered(static_cast<size_t>(size) * 3);
  MPI_Gather(mine, 3, MPI_DOUBLE, gathered.data(), 3, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  int code = 0;
  if (rank == 0) {
    PairProbeResults results;
    results.bytes = *bytes;
    results.iters = static_cast<int>(stream_ms);
    for (size_t i = 0; i < pairs->size(); ++i) {
      const double* m = &gathered[static_cast<size_t>(ranks[i].first) * 3];
      const ProbePair& p = (*pairs)[i];
      results.probes.push_back(OneWayProbe{p.a, p.b, m[0] / 1e9, m[2]});
      results.probes.push_back(OneWayProbe{p.b, p.a, m[1] / 1e9, m[2]});
    }
    try {
      fabtrack::WriteFileAtomically(output, fabtrack::harness::PairProbeResultsToJson(results));
    } catch (const std::exception& e) {
      std::cerr << "fabtrack-pairprobe: " << e.what() << "\n";
      code = 1;
    }
  }
  if (pair != MPI_COMM_NULL) MPI_Comm_free(&pair);
  MPI_Finalize();
  return code;
}
