// Parser for the result tables that nccl-tests (all_reduce_perf, ...) prints to
// stdout, in every generation of the format seen since 2017: header lines
// ("# nThread ...", "#  Rank  0 Group  0 Pid ..."), the column header, one row
// per message size and the "Out of bounds" / "Avg bus bandwidth" trailer.
#pragma once

#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <vector>

#include "collector/parse/line_cleaner.h"
#include "core/model.h"

namespace fabtrack {

// Every nccl-tests result table in the stream, in order of appearance. Pure.
//
// Column layouts are read from each table's column header line, never assumed.
// Values are stored as printed (busbw is never recomputed); placeholders
// ("none" redop, "N/A" #wrong) become nullopt. A table without its trailer is
// returned with complete = false and the rows seen so far. Rows that cannot be
// parsed are skipped and reported in `errors` (which may be null); the parser
// never throws. Lines of different launcher ranks (Open MPI tags, srun labels)
// are followed separately, so several processes that each print a whole table
// yield one table each. NCCL log lines interleaved with a table are skipped.
std::vector<TestTable> ParseNcclTestsText(const std::vector<CleanLine>& lines,
                                          std::vector<ParseError>* errors);

// The same parser fed one line at a time, for a stream that is never held
// whole. A table is handed to `on_table` once nothing later in the stream can
// change it (its launcher rank opened the next table, or the input ended), in
// order of appearance; so the parser holds only the tables still open, not
// all of them. Without `on_table`, Finish() returns them all.
class NcclTestsTextParser {
 public:
  using TableSink = std::function<void(TestTable&&)>;
  NcclTestsTextParser(std::vector<ParseError>* errors, TableSink on_table = nullptr);
  ~NcclTestsTextParser();
  NcclTestsTextParser(const NcclTestsTextParser&) = delete;
  NcclTestsTextParser& operator=(const NcclTestsTextParser&) = delete;

  // `nccl_log_line`: whether the caller found `line` to be an NCCL debug line
  // (collector/parse/nccl_log_line.h); such lines are skipped. Passed in so a
  // caller that also runs the log parser splits each line once.
  void Feed(const CleanLine& line, bool nccl_log_line);
  void Feed(const CleanLine& line);
  // Hands over (or returns, without a sink) the tables still held.
  std::vector<TestTable> Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabtrack
