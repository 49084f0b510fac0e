// Parser for NCCL_DEBUG=INFO output (NCCL 2.4 to 2.28): what the library says
// about communicator setup, the network it picked, its NICs and, above all,
// the channel/ring connection lines that show which transport carried data.
#pragma once

#include <memory>
#include <optional>
#include <vector>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/nccl_log_line.h"
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

// The same parser fed one line at a time, for a stream never held whole. The
// state kept is bounded: distinct values (hosts, NICs, settings), and capped
// lists of what repeats (warnings, notices, channel and init lines) with the
// number left out in NcclLogInfo's dropped_* counts. The first line is held
// with at most a few thousand lines after it to tell whether it was cut from
// the front.
class NcclLogParser {
 public:
  explicit NcclLogParser(std::vector<ParseError>* errors);
  ~NcclLogParser();
  NcclLogParser(const NcclLogParser&) = delete;
  NcclLogParser& operator=(const NcclLogParser&) = delete;

  // `split` is SplitNcclLogLine(line.text), passed in by a caller that needs
  // it too.
  void Feed(const CleanLine& line, std::optional<NcclLogLine> split);
  // The same without copies: `split` views `line.text` (SplitNcclLogLineView),
  // null when the line is not an NCCL line.
  void Feed(const CleanLine& line, const NcclLogLineView* split);
  void Feed(const CleanLine& line);
  NcclLogInfo Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace fabtrack

namespace fabtrack {

// Folds the log of another file of the same job (per-rank NCCL_DEBUG_FILE
// files) into `into`: lists are appended without duplicates, the first
// version/network/setting seen wins, nranks (with its nNodes and localRanks)
// keeps the largest communicator. Pure.
void MergeNcclLog(NcclLogInfo* into, const NcclLogInfo& from);

}  // namespace fabtrack
