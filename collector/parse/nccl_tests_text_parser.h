// Parser for the result tables that nccl-tests (all_reduce_perf, ...) prints to
// stdout, in every generation of the format seen since 2017: header lines
// ("# nThread ...", "#  Rank  0 Group  0 Pid ..."), the column header, one row
// per message size and the "Out of bounds" / "Avg bus bandwidth" trailer.
#pragma once

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

}  // namespace fabtrack
