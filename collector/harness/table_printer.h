// fabtrack-allreduce's console output, in nccl-tests' layout: the first 13
// columns exactly as nccl-tests prints them, then p50, p99 and CV of the
// per-iteration latency. `fabtrack parse` reads it like nccl-tests output. Pure.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/model.h"

namespace fabtrack::harness {

struct TableHalf {
  double time_us = 0, algbw = 0, busbw = 0;
  std::optional<int64_t> wrong;  // nullopt: -c 0 ("N/A")
  double p50_us = 0, p99_us = 0, cv = 0;
};

// nccl-tests' number cell: 2, 1 or 0 decimals by magnitude, exponent form
// when it does not fit `width`.
std::string FormatCell(double value, int width);

std::vector<std::string> HeaderLines(const TestParameters& parameters,
                                     const std::vector<RankDevice>& devices,
                                     const std::string& program);
std::string ColumnHeaderLines();
std::string RowLine(int64_t size_bytes, int64_t count, const std::string& type,
                    const std::string& redop, const TableHalf& oop, const TableHalf& ip);
std::vector<std::string> TrailerLines(int64_t out_of_bounds, double avg_busbw,
                                      const std::string& program);

}  // namespace fabtrack::harness
