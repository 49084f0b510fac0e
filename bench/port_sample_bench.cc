// CPU per `counters watch` sample of a host's ports: the sampler's kept-open
// fast path (what watch and serve use) against a full sysfs walk per sample
// (the reader without the sampler), the order alternating round by round.
// CPU time from getrusage, so another process's load on the machine does not
// count.
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
  std::vector<double> fast, full, ratios;
  size_t ports = 0, counters = 0, saturated = 0;
  for (int r = 0; r < rounds; ++r) {
    double sampler_us = 0, walk_us = 0;
    auto run_sampler = [&] {
      fabtrack::SysfsPortSampler sampler(root, 1e9);  // no timed re-check during the round
      sampler.Sample();                               // the plan: the first full walk
      const double t0 = CpuSeconds();
      for (int i = 0; i < samples; ++i) ports = sampler.Sample().ports.size();
      sampler_us = (CpuSeconds() - t0) / samples * 1e6;
      saturated = sampler.plan().saturated;
      if (sampler.full_reads() != 1 || !sampler.plan().fast) {
        std::fprintf(stderr, "warning: the sampler walked the tree: %s\n",
                     fabtrack::DescribePlan(sampler.plan()).c_str());
      }
    };
    auto run_walk = [&] {
      const double t0 = CpuSeconds();
      for (int i = 0; i < samples; ++i) {
        fabtrack::HostPorts h = fabtrack::ReadSysfsPorts(root);
        counters = 0;
        for (const auto& p : h.ports) counters += p.counters.size() + p.hw_counters.size();
      }
      walk_us = (CpuSeconds() - t0) / samples * 1e6;
    };
    // The order alternates: odd rounds the sampler first, even rounds the walk.
    if (r % 2 == 0) {
      run_sampler();
      run_walk();
    } else {
      run_walk();
      run_sampler();
    }
    fast.push_back(sampler_us);
    full.push_back(walk_us);
    ratios.push_back(walk_us / sampler_us);
    std::printf("round %d (%s first): sampler %.1f us, full walk %.1f us per sample (%.1fx)\n",
                r + 1, r % 2 == 0 ? "sampler" : "walk", sampler_us, walk_us, ratios.back());
  }
  const auto [lo, hi] = std::minmax_element(ratios.begin(), ratios.end());
  std::printf(
      "%zu ports, %zu counters, %zu saturated per sample; median of %d rounds x %d samples: "
      "sampler %.1f us, full walk %.1f us; median ratio %.1fx (rounds %.1f-%.1fx)\n",
      ports, counters, saturated, rounds, samples, *fabtrack::stats::Median(fast), *fabtrack::stats::Median(full),
      *fabtrack::stats::Median(ratios), *lo,
      *hi);
  return 0;
}
