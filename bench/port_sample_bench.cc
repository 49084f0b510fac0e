// CPU per `counters watch` sample of a host's ports: the sampler's kept-open
// fast path (what watch and serve use) against a full sysfs walk per sample
// (the reader without the sampler). CPU time from getrusage, so another
// process's load on the machine does not count.
// Usage: port_sample_bench SYSFS_ROOT [samples, default 2000] [rounds, default 5]
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "collector/counters/sysfs_ports.h"
#include "core/statistics.h"

namespace {

double CpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) * 1e-6;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: port_sample_bench SYSFS_ROOT [samples] [rounds]\n");
    return 2;
  }
  const std::string root = argv[1];
  const int samples = argc > 2 ? std::atoi(argv[2]) : 2000;
  const int rounds = argc > 3 ? std::atoi(argv[3]) : 5;
  std::vector<double> fast, full;
  size_t ports = 0, counters = 0;
  for (int r = 0; r < rounds; ++r) {
    fabtrack::SysfsPortSampler sampler(root, 1e9);  // no timed rediscovery during the round
    sampler.Sample();                               // discovery: the first full walk
    double t0 = CpuSeconds();
    for (int i = 0; i < samples; ++i) {
      const fabtrack::HostPorts& h = sampler.Sample();
      ports = h.ports.size();
    }
    fast.push_back((CpuSeconds() - t0) / samples * 1e6);
    if (sampler.full_reads() != 1)
      std::fprintf(stderr, "warning: the sampler fell back to full walks\n");
    t0 = CpuSeconds();
    for (int i = 0; i < samples; ++i) {
      fabtrack::HostPorts h = fabtrack::ReadSysfsPorts(root);
      counters = 0;
      for (const auto& p : h.ports) counters += p.counters.size() + p.hw_counters.size();
    }
    full.push_back((CpuSeconds() - t0) / samples * 1e6);
    std::printf("round %d: sampler %.1f us, full walk %.1f us per sample\n", r + 1, fast.back(),
                full.back());
  }
  std::printf(
      "%zu ports, %zu counters per sample; median of %d rounds x %d samples: sampler %.1f "
      "us, full walk %.1f us (%.1fx)\n",
      ports, counters, rounds, samples, *fabtrack::stats::Median(fast),
      *fabtrack::stats::Median(full),
      *fabtrack::stats::Median(full) / *fabtrack::stats::Median(fast));
  return 0;
}
