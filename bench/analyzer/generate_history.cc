// Fills a database with the analyzer's scale scenario: a year of nightly
// sweeps of a large cluster (node counts 1, 2, 4, ... max, 30 sizes each,
// harness-style latency columns and per-rank timings for the newest nights)
// plus one night of port deltas for every node's HCAs, written through the
// same store code the collectors use.
// Usage: generate_history --db CONNINFO [--cluster NAME] [--nights 365]
//          [--max-nodes 1024] [--sizes 30] [--ranks-per-node 8] [--hcas 8]
//          [--rank-timing-nights 1] [--seed 1]
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <iostream>
#include <pqxx/pqxx>
#include <random>
#include <string>

#include "bench/synthetic_latency.h"
#include "core/clock.h"
#include "core/content_hash.h"
#include "core/counter_deltas.h"
#include "store/migrations.h"
#include "store/port_writer.h"
#include "store/run_writer.h"

namespace {

using namespace fabtrack;

struct Options {
  std::string db;
  std::string cluster = "scale";
  int nights = 365;
  int max_nodes = 1024;
  int sizes = 30;
  int ranks_per_node = 8;
  int hcas = 8;
  int rank_timing_nights = 1;
  unsigned seed = 1;
};

std::string Iso(std::time_t t) {
  return fabtrack::IsoFromSeconds(static_cast<double>(t), fabtrack::IsoStyle::kSeconds);
}

std::string Host(int i) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "gpu%04d", i);
  return buf;
}

// A healthy NDR fabric: busbw approaches ~370 GB/s for large messages and
// loses a little per doubling of nodes; small-message latency grows with
// log2(nodes). Night-to-night noise ~1.5% (busbw) and ~4% (latency).
RunRecord Night(const Options& o, std::time_t start, int night, int nodes, std::mt19937_64& rng,
                bool rank_timings) {
  std::normal_distribution<double> bw_noise(1.0, 0.015), lat_noise(1.0, 0.04);
  RunRecord run;
  run.cluster = o.cluster;
  run.started_at = Iso(start);
  run.source = "fabtrack-allreduce";
  run.backend = "nccl";
  run.collective = "all_reduce";
  run.dtype = "float";
  run.redop = "sum";
  run.nodes = nodes;
  run.ranks_per_node = o.ranks_per_node;
  run.ranks = nodes * o.ranks_per_node;
  for (int n = 0; n < nodes; ++n) run.hosts.push_back(Host(n));
  run.network = "IB";
  run.transports = {"NET/IB", "P2P/NVL"};
  run.gdrdma = true;
  run.nccl_version = "2.28.9";
  run.sweep_id = "night-" + std::to_string(night);
  run.content_hash =
      Sha256Hex(o.cluster + "/" + std::to_string(night) + "/" + std::to_string(nodes));
  const double doublings = std::log2(static_cast<double>(nodes));
  const double peak_busbw = (nodes == 1 ? 420.0 : 370.0 * std::pow(0.985, doublings));
  const double base_latency_us = nodes == 1 ? 12.0 : 18.0 + 6.0 * doublings;
  const double ranks = run.ranks.value();
  const double factor = 2.0 * (ranks - 1) / ranks;
  const double night_bw = bw_noise(rng), night_lat = lat_noise(rng);
  for (int i = 0; i < o.sizes; ++i) {
    ResultRow r;
    const int64_t size = int64_t{8} << i;
    const double busbw_ideal = peak_busbw * night_bw;
    const double algbw = busbw_ideal / factor;
    double t = base_latency_us * night_lat + static_cast<double>(size) / (algbw * 1e3);
    t *= bw_noise(rng);
    r.row.size_bytes = size;
    r.row.count = size / 4;
    r.row.type = "float";
    r.row.redop = "sum";
    r.row.root = -1;
    const double measured_algbw = static_cast<double>(size) / t / 1e3;
    r.row.oop = Measurement{t, measured_algbw, measured_algbw * factor, 0, std::nullopt};
    r.row.ip = r.row.oop;
    r.latency = bench::ScaledLatency(t, {0.99, 1.03, 1.08, 0.95, 1.15, 0.03, 0.03});
    r.latency.straggler_host = Host(static_cast<int>(rng() % nodes));
    r.latency.straggler_excess_us = t * 0.01;
    run.results.push_back(r);
    if (rank_timings) {
      std::normal_distribution<double> rank_noise(1.0, 0.01);
      for (int rank = 0; rank < run.ranks.value(); ++rank) {
        RankTiming rt;
        rt.row_index = i;
        rt.rank = rank;
        rt.host = Host(rank / o.ranks_per_node);
        rt.mean_us = t * rank_noise(rng);
        rt.p50_us = *rt.mean_us * 0.99;
        rt.p99_us = *rt.mean_us * 1.08;
        rt.max_us = *rt.mean_us * 1.15;
        rt.lateness_us = std::fabs(*rt.mean_us - t);
        run.rank_timings.push_back(rt);
      }
    }
  }
  return run;
}

// One HCA port's counters before and after a night's largest run.
HostPorts Ports(const Options& o, int node, uint64_t base, uint64_t moved) {
  HostPorts h;
  h.host = Host(node);
  for (int hca = 0; hca < o.hcas; ++hca) {
    PortSample p;
    p.device = "mlx5_" + std::to_string(hca);
    p.port = 1;
    p.link_layer = "InfiniBand";
    p.state = "ACTIVE";
    p.phys_state = "LinkUp";
    p.rate_gbps = 400;
    for (const char* c :
         {"symbol_error", "link_error_recovery", "link_downed", "port_rcv_errors",
          "port_rcv_remote_physical_errors", "port_xmit_discards", "local_link_integrity_errors",
          "excessive_buffer_overrun_errors", "VL15_dropped", "port_rcv_switch_relay_errors",
          "port_xmit_constraint_errors", "port_rcv_constraint_errors"}) {
      p.counters[c] = 0;
    }
    p.counters["port_xmit_wait"] = base / 1000 + moved / 4000;
    p.counters["port_xmit_data"] = base + moved / 4;
    p.counters["port_rcv_data"] = base + moved / 4;
    p.counters["port_xmit_packets"] = base / 1024 + moved / 4096;
    p.counters["port_rcv_packets"] = base / 1024 + moved / 4096;
    p.counters["unicast_xmit_packets"] = base / 1024 + moved / 4096;
    p.counters["unicast_rcv_packets"] = base / 1024 + moved / 4096;
    p.xmit_bytes = p.counters["port_xmit_data"] * 4;
    p.rcv_bytes = p.counters["port_rcv_data"] * 4;
    for (const char* c : {"local_ack_timeout_err", "out_of_buffer", "out_of_sequence",
                          "packet_seq_err", "rnr_nak_retry_err", "duplicate_request"}) {
      p.hw_counters[c] = 0;
    }
    h.ports.push_back(std::move(p));
  }
  return h;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string k = argv[i], v = argv[i + 1];
    if (k == "--db")
      o.db = v;
    else if (k == "--cluster")
      o.cluster = v;
    else if (k == "--nights")
      o.nights = std::stoi(v);
    else if (k == "--max-nodes")
      o.max_nodes = std::stoi(v);
    else if (k == "--sizes")
      o.sizes = std::stoi(v);
    else if (k == "--ranks-per-node")
      o.ranks_per_node = std::stoi(v);
    else if (k == "--hcas")
      o.hcas = std::stoi(v);
    else if (k == "--rank-timing-nights")
      o.rank_timing_nights = std::stoi(v);
    else if (k == "--seed")
      o.seed = static_cast<unsigned>(std::stoul(v));
    else {
      std::cerr << "generate_history: unknown option " << k << "\n";
      return 2;
    }
  }
  if (o.db.empty()) {
    std::cerr << "usage: generate_history --db CONNINFO [--nights N] [--max-nodes N] ...\n";
    return 2;
  }
  pqxx::connection connection(o.db);
  fabtrack::store::Migrate(connection);
  std::mt19937_64 rng(o.seed);
  // The newest night starts 02:00 UTC yesterday.
  std::time_t now = std::time(nullptr);
  std::time_t last = now - now % 86400 - 86400 + 2 * 3600;
  size_t runs = 0, rows = 0, rank_rows = 0;
  int64_t newest_big_run = 0;
  for (int night = 0; night < o.nights; ++night) {
    std::time_t start = last - static_cast<std::time_t>(o.nights - 1 - night) * 86400;
    pqxx::work txn(connection);
    int slot = 0;
    for (int nodes = 1; nodes <= o.max_nodes; nodes *= 2, ++slot) {
      bool timings = night >= o.nights - o.rank_timing_nights;
      RunRecord run = Night(o, start + slot * 300, night, nodes, rng, timings);
      store::WriteRunResult written = store::WriteRun(txn, run);
      ++runs;
      rows += run.results.size();
      rank_rows += run.rank_timings.size();
      if (night == o.nights - 1 && nodes * 2 > o.max_nodes) newest_big_run = written.run_id;
    }
    txn.commit();
    if (night % 30 == 0) std::cerr << "night " << night << ": " << runs << " runs\n";
  }
  // Port deltas of the newest night's largest run: every node's HCAs.
  size_t delta_rows = 0;
  {
    pqxx::work txn(connection);
    std::string start = Iso(last + 3000), end = Iso(last + 3300);
    for (int node = 0; node < o.max_nodes; ++node) {
      HostPorts before = Ports(o, node, 1000000000ull + node, 0);
      HostPorts after = Ports(o, node, 1000000000ull + node, 400ull << 30);
      delta_rows += store::WriteRunPortDeltas(
          txn, o.cluster, after, ComputeDeltas(before, after, 300.0), newest_big_run, start, end);
    }
    txn.commit();
  }
  std::cout << "generated cluster " << o.cluster << ": " << runs << " runs, " << rows
            << " result rows, " << rank_rows << " rank timings, " << delta_rows << " port deltas\n";
  return 0;
}
