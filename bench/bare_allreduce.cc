// The peer for the harness-overhead benchmark: a bare MPI_Allreduce timing
// loop, the way nccl-tests times (one timer around all iterations, averaged
// over ranks), printing "size busbw" per size.
// Usage: mpirun -np N bare_allreduce MIN_BYTES MAX_BYTES FACTOR ITERS WARMUP
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, ranks = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (argc != 6) {
    if (rank == 0) std::fprintf(stderr, "usage: bare_allreduce MIN MAX FACTOR ITERS WARMUP\n");
    MPI_Finalize();
    return 2;
  }
  long long min = std::atoll(argv[1]), max = std::atoll(argv[2]), factor = std::atoll(argv[3]);
  int iters = std::atoi(argv[4]), warmup = std::atoi(argv[5]);
  std::vector<float> send(max / 4 + 1, 1.0f), recv(max / 4 + 1, 0.0f);
  for (long long bytes = min; bytes <= max; bytes *= factor) {
    int count = static_cast<int>(bytes / 4);
    for (int w = 0; w < warmup; ++w) {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < iters; ++i) {
      MPI_Allreduce(send.data(), recv.data(), count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    }
    double per_iter = (MPI_Wtime() - start) / iters;
    double sum = 0;
    MPI_Allreduce(&per_iter, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double time_us = sum / ranks * 1e6;
    double algbw = bytes / time_us / 1e3;
    double busbw = algbw * 2.0 * (ranks - 1) / ranks;
    if (rank == 0) std::printf("%lld %.6f %.3f\n", bytes, busbw, time_us);
    if (factor <= 1) break;
  }
  MPI_Finalize();
  return 0;
}
