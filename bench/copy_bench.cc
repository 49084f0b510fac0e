// Bulk-write throughput into run_results, side by side in one run:
//   fabtrack  - store::WriteRun (pqxx::stream_to COPY), the path ingest uses
//   psql      - `psql \copy` of the same rows from a file (the practical limit)
//   insert    - row-by-row parameterized INSERT in one transaction
// Usage: copy_bench --db CONNINFO [--rows N] [--repeats R]
// Prints rows/s per method (median over repeats) and fabtrack/psql ratio.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <pqxx/pqxx>
#include <random>
#include <string>
#include <vector>

#include "bench/synthetic_latency.h"
#include "core/content_hash.h"
#include "core/statistics.h"
#include "store/copy_row.h"
#include "store/migrations.h"
#include "store/run_writer.h"

namespace {

using fabtrack::RunRecord;
using Clock = std::chrono::steady_clock;

// A realistic sweep: sizes 8 B .. 16 GiB repeated, nccl-tests-like numbers,
// some N/A cells and per-iteration latency columns filled.
RunRecord MakeRun(size_t rows, int trial) {
  RunRecord run;
  run.cluster = "bench";
  run.started_at = "2026-12-01T02:00:00Z";
  run.source = "fabtrack-allreduce";
  run.collective = "all_reduce";
  run.content_hash =
      fabtrack::Sha256Hex("bench-" + std::to_string(trial) + "-" + std::to_string(getpid()));
  std::mt19937_64 rng(42 + trial);
  std::uniform_real_distribution<double> jitter(0.95, 1.05);
  for (size_t i = 0; i < rows; ++i) {
    fabtrack::ResultRow r;
    int64_t size = int64_t{8} << (i % 32);
    r.row.size_bytes = size;
    r.row.count = size / 4;
    r.row.type = "float";
    r.row.redop = "sum";
    r.row.root = -1;
    double t = (30.0 + size / 25e3) * jitter(rng);
    double algbw = size / t / 1e3;
    r.row.oop = fabtrack::Measurement{t, algbw, algbw * 1.875, 0, std::nullopt};
    r.row.ip = fabtrack::Measurement{t * jitter(rng), algbw, algbw * 1.875,
                                     (i % 7 == 0) ? std::nullopt : std::optional<int64_t>(0),
                                     std::nullopt};
    r.latency = fabtrack::bench::ScaledLatency(t, {0.98, 1.04, 1.2, 0.9, 1.5, 0.05, 0.05});
    if (i % 5 == 0) {
      r.latency.straggler_host = "gpu-node-017";
      r.latency.straggler_rank = 131;
      r.latency.straggler_excess_us = t * 0.1;
    }
    run.results.push_back(std::move(r));
  }
  return run;
}

std::string ColumnList() {
  std::string cols;
  for (const auto& c : fabtrack::store::kResultColumns) cols += (cols.empty() ? "" : ", ") + c;
  return cols;
}

// The exact fields ingest writes, so all three methods carry the same bytes.
fabtrack::store::CopyRow RowFields(int64_t run_id, int index, const fabtrack::ResultRow& r) {
  fabtrack::store::CopyRow row;
  fabtrack::store::AppendResultFields(row, run_id, index, r);
  return row;
}

int64_t NewRunRow(pqxx::connection& c, int trial, const char* method) {
  pqxx::work txn(c);
  fabtrack::store::EnsureCluster(txn, "bench");
  auto row = txn.exec_params1(
      "INSERT INTO runs (cluster, started_at, source, content_hash, table_index, status) "
      "VALUES ('bench', now(), $1, $2, 0, 'complete') RETURNING id",
      std::string("bench-") + method,
      fabtrack::Sha256Hex(std::string(method) + std::to_string(trial) + std::to_string(getpid())));
  txn.commit();
  return row[0].as<int64_t>();
}

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

std::string Escape(const std::string& s) {  // COPY text format
  std::string out;
  for (char c : s) {
    if (c == '\\')
      out += "\\\\";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\n')
      out += "\\n";
    else
      out += c;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  std::string db;
  size_t rows = 200000;
  int repeats = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--db")
      db = argv[i + 1];
    else if (a == "--rows")
      rows = std::stoul(argv[i + 1]);
    else if (a == "--repeats")
      repeats = std::stoi(argv[i + 1]);
  }
  if (db.empty()) {
    std::cerr << "usage: copy_bench --db CONNINFO [--rows N] [--repeats R]\n";
    return 2;
  }
  pqxx::connection c(db);
  fabtrack::store::Migrate(c);
  {
    pqxx::work txn(c);
    txn.exec0("TRUNCATE runs CASCADE");
    txn.commit();
  }
  std::vector<double> fabtrack_s, psql_s, insert_s;
  std::string tsv = "/tmp/copy_bench_" + std::to_string(getpid()) + ".tsv";
  std::vector<double> ratios;  // per trial: fabtrack rows/s over psql's
  for (int trial = 0; trial < repeats; ++trial) {
    RunRecord run = MakeRun(rows, trial);

    // psql \copy's input: the same rows written to a file beforehand (not timed).
    int64_t psql_run = NewRunRow(c, trial, "psql");
    {
      std::ofstream out(tsv);
      for (size_t i = 0; i < run.results.size(); ++i) {
        auto row = RowFields(psql_run, static_cast<int>(i), run.results[i]);
        bool first = true;
        for (const auto& f : row.fields()) {
          out << (first ? "" : "\t") << (f.null ? "\\N" : Escape(f.text));
          first = false;
        }
        out << '\n';
      }
    }
    // fabtrack: the real WriteRun path (run row + COPY of the results).
    auto run_fabtrack = [&] {
      auto t0 = Clock::now();
      pqxx::work txn(c);
      fabtrack::store::WriteRun(txn, run);
      txn.commit();
      fabtrack_s.push_back(Seconds(t0, Clock::now()));
    };
    auto run_psql = [&] {
      std::string cmd = "psql -X -q -v ON_ERROR_STOP=1 '" + db + "' -c \"\\copy run_results (" +
                        ColumnList() + ") FROM '" + tsv + "'\"";
      auto t0 = Clock::now();
      int rc = std::system(cmd.c_str());
      psql_s.push_back(Seconds(t0, Clock::now()));
      return rc == 0;
    };
    // The order alternates, so that neither side always gets the warmer
    // cache or the quieter moment.
    bool psql_ok = true;
    if (trial % 2 == 0) {
      run_fabtrack();
      psql_ok = run_psql();
    } else {
      psql_ok = run_psql();
      run_fabtrack();
    }
    if (!psql_ok) {
      std::cerr << "psql failed\n";
      return 1;
    }
    ratios.push_back(psql_s.back() / fabtrack_s.back());

    // Row-by-row INSERT (prepared), one transaction.
    int64_t insert_run = NewRunRow(c, trial, "insert");
    std::string placeholders;
    for (int k = 1; k <= 31; ++k) placeholders += (k > 1 ? ", $" : "$") + std::to_string(k);
    c.prepare("bench_insert", std::string("INSERT INTO run_results (") + ColumnList() +
                                  ") VALUES (" + placeholders + ")");
    auto t0 = Clock::now();
    {
      pqxx::work txn(c);
      for (size_t i = 0; i < run.results.size(); ++i) {
        auto row = RowFields(insert_run, static_cast<int>(i), run.results[i]);
        txn.exec_prepared("bench_insert", pqxx::prepare::make_dynamic_params(row.fields()));
      }
      txn.commit();
    }
    insert_s.push_back(Seconds(t0, Clock::now()));
    c.unprepare("bench_insert");
    pqxx::work txn(c);
    txn.exec0("TRUNCATE runs CASCADE");
    txn.commit();
    std::fprintf(stderr, "trial %d (%s first): fabtrack %.3fs psql %.3fs insert %.3fs\n", trial,
                 trial % 2 == 0 ? "fabtrack" : "psql", fabtrack_s.back(), psql_s.back(),
                 insert_s.back());
  }
  std::remove(tsv.c_str());
  double f = rows / *fabtrack::stats::Median(fabtrack_s),
         p = rows / *fabtrack::stats::Median(psql_s),
         ins = rows / *fabtrack::stats::Median(insert_s);
  std::printf("rows per trial: %zu, trials: %d (median)\n", rows, repeats);
  std::printf("%-28s %12s %10s\n", "method", "rows/s", "vs psql");
  std::printf("%-28s %12.0f %9.2fx\n", "fabtrack (stream_to COPY)", f, f / p);
  std::printf("%-28s %12.0f %9.2fx\n", "psql \\copy", p, 1.0);
  std::printf("%-28s %12.0f %9.2fx\n", "row-by-row INSERT", ins, ins / p);
  std::printf("fabtrack / psql per trial (order alternating): median %.2fx, spread %.2f-%.2fx\n",
              *fabtrack::stats::Median(ratios), *std::min_element(ratios.begin(), ratios.end()),
              *std::max_element(ratios.begin(), ratios.end()));
  return 0;
}
