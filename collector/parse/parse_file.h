// Entry point of the parsers: one file's text in, everything it says out.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/model.h"

namespace fabtrack {

// Detects the format (nccl-tests JSON, or text holding nccl-tests tables and/or
// NCCL debug lines, in any mix) and runs the matching parsers. Pure: `name` is
// only copied into the result.
ParsedFile ParseText(std::string_view text, const std::string& name);

// "2.29.7" from NCCL_VERSION_CODE 22907 (2708 -> "2.7.8" before 2.9).
std::string NcclVersionFromCode(int code);

// Reads `path` and parses it, in one pass with bounded memory (see
// FileParser). I/O failures become an error entry (line 0).
ParsedFile ParsePath(const std::string& path);

// ParseText fed in chunks of any size, so a file is parsed as it is read and
// never held whole: text is cut into lines by a LineSplitter and each line goes
// through the nccl-tests and NCCL log state machines once. What it keeps is
// bounded whatever the input size: the log keeps distinct values and capped
// samples (NcclLogInfo's dropped_* counts), errors past kMaxKeptErrors are
// counted in dropped_errors, and with `on_table` each finished table is handed
// over instead of kept (ParsedFile::tests then stays empty). Only an
// nccl-tests JSON report is held whole, up to kMaxJsonBytes (they are a few
// KB; a larger one is reported, not parsed). Pure: no I/O.
class FileParser {
 public:
  static constexpr size_t kMaxKeptErrors = 1000;
  static constexpr size_t kMaxJsonBytes = 8u << 20;

  using TableSink = std::function<void(TestTable&&)>;
  explicit FileParser(std::string name, TableSink on_table = nullptr);
  ~FileParser();
  FileParser(const FileParser&) = delete;
  FileParser& operator=(const FileParser&) = delete;

  void Feed(std::string_view chunk);
  ParsedFile Finish();

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

// Streams the file at `path` through a FileParser. `on_chunk` (may be null)
// is told the bytes read so far, for progress.
ParsedFile ParsePathStreaming(const std::string& path, FileParser::TableSink on_table,
                              const std::function<void(uint64_t)>& on_chunk = nullptr);

}  // namespace fabtrack
