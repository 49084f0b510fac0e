// Parser for NCCL_DEBUG=INFO output (NCCL 2.4 to 2.28): what the library says
// about communicator setup, the network it picked, its NICs and, above all,
// the channel/ring connection lines that show which transport carried data.
#pragma once

#include <vector>

#include "collector/parse/line_cleaner.h"
#include "core/model.h"

namespace fabtrack {

// Extracts what an NCCL debug stream says about communicator setup. Lines that
// are not NCCL log lines are ignored, so a whole nccl-tests output (tables,
// launcher noise) can be passed as is; only lines with NCCL's own prefix count
// (collector/parse/nccl_log_line.h), and only such a prefix names a host.
// Lines that look like connection or device lines but are cut short or
// garbled, words outside NCCL's vocabulary (collector/parse/nccl_vocabulary.h),
// a first line that starts mid-line and an unterminated last line are skipped
// and reported in `errors` (may be null). Pure; never throws on malformed
// input.
NcclLogInfo ParseNcclLog(const std::vector<CleanLine>& lines, std::vector<ParseError>* errors);

}  // namespace fabtrack

namespace fabtrack {

// Folds the log of another file of the same job (per-rank NCCL_DEBUG_FILE
// files) into `into`: lists are appended without duplicates, the first
// version/network/setting seen wins, nranks (with its nNodes and localRanks)
// keeps the largest communicator. Pure.
void MergeNcclLog(NcclLogInfo* into, const NcclLogInfo& from);

}  // namespace fabtrack
