#include "collector/parse/parse_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <vector>

#include "collector/parse/line_cleaner.h"
#include "collector/parse/line_splitter.h"
#include "collector/parse/nccl_log_line.h"
#include "collector/parse/nccl_log_parser.h"
#include "collector/parse/nccl_tests_json_parser.h"
#include "collector/parse/nccl_tests_text_parser.h"
#include "core/run_record_json.h"

namespace fabtrack {
namespace {

bool LooksLikeJson(std::string_view text) {
  for (char c : text) {
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') continue;
    return c == '{';
  }
  return false;
}

// NUL bytes mean binary input: refuse early with one clear error instead of
// a flood of per-line complaints.
bool LooksBinary(std::string_view text) {
  return text.substr(0, 65536).find('\0') != std::string_view::npos;
}

// Fills the file-level NCCL version from nccl-tests' "nccl-library=23003"
// (NCCL_VERSION_CODE) when the log did not print one.
void VersionFromTables(ParsedFile* parsed) {
  if (parsed->log.nccl_version) return;
  for (const TestTable& t : parsed->tests) {
    if (t.nccl_version_code) {
      parsed->log.nccl_version = NcclVersionFromCode(*t.nccl_version_code);
      return;
    }
  }
}

// fabtrack-allreduce's own result file (core/run_record_json.h), shown as a
// table like any other. Returns false when the text is not one.
bool ParseHarnessResult(std::string_view text, ParsedFile* parsed) {
  nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded() || !IsRunFile(doc)) return false;
  std::string error;
  std::optional<RunRecord> run = RunRecordFromJson(doc, &error);
  if (!run) {
    parsed->errors.push_back({1, "fabtrack-allreduce result file: " + error});
    return true;
  }
  TestTable t;
  t.collective = run->collective;
  t.ranks = run->ranks;
  t.hosts = run->hosts;
  t.devices = run->rank_devices;
  for (const ResultRow& r : run->results) t.rows.push_back(r.row);
  t.avg_busbw = run->avg_busbw_gbps;
  t.oob_ok = run->oob_ok;
  t.oob_count = run->oob_count;
  t.complete = run->status != RunStatus::kPartial;
  t.started_at = run->started_at;
  parsed->log.nccl_version = run->nccl_version;
  parsed->log.network = run->network;
  parsed->tests.push_back(std::move(t));
  return true;
}

}  // namespace

std::string NcclVersionFromCode(int code) {
  // NCCL_VERSION(X,Y,Z): X*1000+Y*100+Z before 2.9, X*10000+Y*100+Z since.
  int major, minor, patch;
  if (code >= 20900) {
    major = code / 10000;
    minor = (code % 10000) / 100;
    patch = code % 100;
  } else {
    major = code / 1000;
    minor = (code % 1000) / 100;
    patch = code % 100;
  }
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

class FileParser::Impl {
 public:
  Impl(std::string name, TableSink on_table) : on_table_(std::move(on_table)) {
    parsed_.file = std::move(name);
    if (on_table_) {
      // The first table's NCCL version code stands in for a log that did not
      // print one (VersionFromTables), so note it on the way through.
      sink_ = [this](TestTable&& t) {
        if (!first_version_code_) first_version_code_ = t.nccl_version_code;
        on_table_(std::move(t));
      };
    }
  }

  void Feed(std::string_view chunk) {
    switch (mode_) {
      case Mode::kUndecided:
        // Binary and JSON are told from the first 64 KiB, as ParseText did
        // with the whole text.
        prefix_.append(chunk);
        if (prefix_.size() >= kSniffBytes) Decide();
        return;
      case Mode::kBinary:
        return;
      case Mode::kJson:
        if (json_.size() + chunk.size() > kMaxJsonBytes) {
          json_too_large_ = true;
          json_.clear();
          json_.shrink_to_fit();
          mode_ = Mode::kBinary;  // ignore the rest
          return;
        }
        json_.append(chunk);
        return;
      case Mode::kText:
        FeedText(chunk);
        return;
    }
  }

  ParsedFile Finish() {
    if (mode_ == Mode::kUndecided) Decide();
    if (json_too_large_) {
      parsed_.errors.push_back({0, "JSON larger than " + std::to_string(kMaxJsonBytes >> 20) +
                                       " MiB; an nccl-tests -J report is a few KB, so not parsed"});
    } else if (mode_ == Mode::kJson) {
      if (!ParseHarnessResult(json_, &parsed_)) {
        parsed_.tests = ParseNcclTestsJson(json_, &parsed_.errors);
        VersionFromTables(&parsed_);
      }
      if (on_table_) {
        for (TestTable& t : parsed_.tests) on_table_(std::move(t));
        parsed_.tests.clear();
      }
    } else if (mode_ == Mode::kText) {
      splitter_.Finish([this](const RawLine& raw) { Line(raw); });
      parsed_.log = log_->Finish();
      std::vector<TestTable> rest = text_->Finish();
      if (!on_table_) parsed_.tests = std::move(rest);
      // The log's errors first, then the tables', as when each parser read the
      // whole file in turn.
      CapErrors(&log_errors_);
      CapErrors(&text_errors_);
      parsed_.errors = std::move(log_errors_);
      parsed_.errors.insert(parsed_.errors.end(), text_errors_.begin(), text_errors_.end());
      CapErrors(&parsed_.errors);
      if (!parsed_.log.nccl_version) {
        if (on_table_) {
          if (first_version_code_) {
            parsed_.log.nccl_version = NcclVersionFromCode(*first_version_code_);
          }
        } else {
          VersionFromTables(&parsed_);
        }
      }
    }
    return std::move(parsed_);
  }

 private:
  enum class Mode { kUndecided, kBinary, kJson, kText };
  static constexpr size_t kSniffBytes = 65536;

  void Decide() {
    std::string prefix;
    prefix.swap(prefix_);
    if (LooksBinary(prefix)) {
      parsed_.errors.push_back(
          {0, "binary data (NUL bytes); not an nccl-tests output or NCCL log"});
      mode_ = Mode::kBinary;
    } else if (LooksLikeJson(prefix)) {
      mode_ = Mode::kJson;
      Feed(prefix);
    } else {
      mode_ = Mode::kText;
      log_ = std::make_unique<NcclLogParser>(&log_errors_);
      text_ = std::make_unique<NcclTestsTextParser>(&text_errors_, sink_);
      FeedText(prefix);
    }
  }

  void FeedText(std::string_view chunk) {
    splitter_.Feed(chunk, [this](const RawLine& raw) { Line(raw); });
  }

  void Line(const RawLine& raw) {
    CleanOneLineInto(raw.text, raw.number, &clean_);
    clean_.unterminated = raw.unterminated;
    NcclLogLineView split;
    const bool is_log_line = SplitNcclLogLineView(clean_.text, &split);
    text_->Feed(clean_, is_log_line);
    log_->Feed(clean_, is_log_line ? &split : nullptr);
    if (log_errors_.size() > 2 * kMaxKeptErrors) CapErrors(&log_errors_);
    if (text_errors_.size() > 2 * kMaxKeptErrors) CapErrors(&text_errors_);
  }

  // Keeps the first errors; a file that repeats a malformed line all through
  // would otherwise grow a list as long as itself.
  void CapErrors(std::vector<ParseError>* errors) {
    if (errors->size() <= kMaxKeptErrors) return;
    parsed_.dropped_errors += static_cast<int64_t>(errors->size() - kMaxKeptErrors);
    errors->resize(kMaxKeptErrors);
  }

  TableSink on_table_;
  TableSink sink_;
  ParsedFile parsed_;
  std::vector<ParseError> log_errors_;
  std::vector<ParseError> text_errors_;
  Mode mode_ = Mode::kUndecided;
  std::string prefix_;
  std::string json_;
  bool json_too_large_ = false;
  LineSplitter splitter_;
  CleanLine clean_;
  std::unique_ptr<NcclLogParser> log_;
  std::unique_ptr<NcclTestsTextParser> text_;
  std::optional<int> first_version_code_;
};

FileParser::FileParser(std::string name, TableSink on_table)
    : impl_(std::make_unique<Impl>(std::move(name), std::move(on_table))) {}
FileParser::~FileParser() = default;
void FileParser::Feed(std::string_view chunk) { impl_->Feed(chunk); }
ParsedFile FileParser::Finish() { return impl_->Finish(); }

ParsedFile ParseText(std::string_view text, const std::string& name) {
  FileParser parser(name);
  parser.Feed(text);
  return parser.Finish();
}

ParsedFile ParsePathStreaming(const std::string& path, FileParser::TableSink on_table,
                              const std::function<void(uint64_t)>& on_chunk) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    ParsedFile parsed;
    parsed.file = path;
    parsed.errors.push_back({0, std::string("cannot read: ") + std::strerror(errno)});
    return parsed;
  }
  FileParser parser(path, std::move(on_table));
  // One fixed buffer for the whole file: the parse holds no more of it.
  std::vector<char> buffer(1 << 20);
  uint64_t total = 0;
  while (true) {
    ssize_t n = ::read(fd, buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      int err = errno;
      ::close(fd);
      ParsedFile parsed = parser.Finish();
      parsed.errors.push_back({0, std::string("read failed: ") + std::strerror(err)});
      return parsed;
    }
    if (n == 0) break;
    total += static_cast<uint64_t>(n);
    parser.Feed(std::string_view(buffer.data(), static_cast<size_t>(n)));
    if (on_chunk) on_chunk(total);
  }
  ::close(fd);
  return parser.Finish();
}

ParsedFile ParsePath(const std::string& path) { return ParsePathStreaming(path, nullptr); }

}  // namespace fabtrack
