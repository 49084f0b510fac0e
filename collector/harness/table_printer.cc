#include "collector/harness/table_printer.h"

#include <cstdio>
#include <sstream>

namespace fabtrack::harness {
namespace {

std::string Printf(const char* format, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

}  // namespace

std::string FormatCell(double value, int width) {
  // Digits before the decimal point decide how many fit after it.
  int digits = 0;
  for (double v = 1; value >= v && digits < 40; v *= 10) ++digits;
  if (digits < width - 2) return Printf("%*.2f", width, value);
  if (digits < width - 1) return Printf("%*.1f", width, value);
  if (digits < width + 1) return Printf("%*.0f", width, value);
  return Printf("%*.1e", width, value);
}

std::vector<std::string> HeaderLines(const TestParameters& p,
                                     const std::vector<RankDevice>& devices,
                                     const std::string& program) {
  std::vector<std::string> lines;
  lines.push_back("# Collective test starting: " + program);
  std::string step = p.step_factor
                         ? Printf("%lld(factor)", static_cast<long long>(*p.step_factor))
                         : Printf("%lld(bytes)", static_cast<long long>(p.step_bytes.value_or(0)));
  lines.push_back(Printf(
      "# nThread %d nGpus %d minBytes %lld maxBytes %lld step: %s warmup iters: %d iters: %d "
      "agg iters: 1 validation: %d graph: %d",
      p.threads.value_or(1), p.gpus_per_thread.value_or(1),
      static_cast<long long>(p.min_bytes.value_or(0)),
      static_cast<long long>(p.max_bytes.value_or(0)), step.c_str(), p.warmup_iters.value_or(0),
      p.iters.value_or(0), p.validation.value_or(1), p.graph.value_or(0)));
  lines.push_back("#");
  lines.push_back("# Using devices");
  for (const RankDevice& d : devices) {
    lines.push_back(Printf("#  Rank %2d Group  0 Pid %6lld on %10s device %2d [%s] %s", d.rank,
                           static_cast<long long>(d.pid.value_or(0)), d.host.c_str(),
                           d.device.value_or(-1), d.bus_id.c_str(), d.gpu_model.c_str()));
  }
  return lines;
}

std::string ColumnHeaderLines() {
  std::ostringstream s;
  s << "#\n"
    << Printf(
           "# %10s  %12s  %8s  %6s  %6s           out-of-place                       "
           "in-place          %s\n",
           "", "", "", "", "", "  per-iteration (out-of-place)")
    << Printf(
           "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %6s\n",
           "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time",
           "algbw", "busbw", "#wrong", "p50", "p99", "cv%")
    << Printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %7s  %6s",
              "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)",
              "(GB/s)", "", "(us)", "(us)", "(%)");
  return s.str();
}

std::string RowLine(int64_t size_bytes, int64_t count, const std::string& type,
                    const std::string& redop, const TableHalf& oop, const TableHalf& ip) {
  std::string line = Printf("%12lld  %12lld  %8s  %6s  %6d", static_cast<long long>(size_bytes),
                            static_cast<long long>(count), type.c_str(), redop.c_str(), -1);
  for (const TableHalf* h : {&oop, &ip}) {
    line += "  " + FormatCell(h->time_us, 7) + "  " + FormatCell(h->algbw, 6) + "  " +
            FormatCell(h->busbw, 6) + "  ";
    line += h->wrong ? Printf("%6g", static_cast<double>(*h->wrong)) : std::string("   N/A");
  }
  line += "  " + FormatCell(oop.p50_us, 7) + "  " + FormatCell(oop.p99_us, 7) + "  " +
          FormatCell(oop.cv * 100.0, 6);
  return line;
}

std::vector<std::string> TrailerLines(int64_t out_of_bounds, double avg_busbw,
                                      const std::string& program) {
  return {Printf("# %-20s : %lld %s", "Out of bounds values", static_cast<long long>(out_of_bounds),
                 out_of_bounds ? "FAILED" : "OK"),
          Printf("# %-20s : %g ", "Avg bus bandwidth", avg_busbw), "#",
          "# Collective test concluded: " + program, "#"};
}

}  // namespace fabtrack::harness
