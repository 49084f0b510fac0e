// fabtrack parse FILE|FOLDER|GLOB... [--format json|text]
//
// Streams: each file is read once through a fixed buffer and its tables are
// written as they are finished, so memory stays bounded whatever the size of
// the input (collector/parse/parse_file.h).
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <sstream>

#include "app/input_paths.h"
#include "cli/commands.h"
#include "collector/parse/parse_file.h"
#include "collector/parse/parsed_file_json.h"

namespace fabtrack::cli {
namespace {

struct ParseOptions {
  std::vector<std::string> files;
  std::string format = "json";
};

// Text output lists at most this many tables per file: one line each would
// grow with a month of nightly tables in one file, and the JSON has them all.
constexpr size_t kMaxTableLines = 1000;

using nlohmann::json;

std::string Dump(const json& j) { return j.dump(2, ' ', false, json::error_handler_t::replace); }

// nlohmann's dump(2) of a value nested `depth` levels deep: every line after
// the first moves right, so the streamed document reads as one dump would.
std::string DumpNested(const json& j, int depth) {
  std::string text = Dump(j);
  std::string pad(static_cast<size_t>(2 * depth), ' ');
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += pad;
  }
  return out;
}

std::string TableLine(const TestTable& t) {
  std::ostringstream line;
  line << "  " << t.collective.value_or("?") << ": " << t.rows.size() << " sizes, "
       << (t.ranks ? std::to_string(*t.ranks) : "?") << " ranks on " << t.hosts.size()
       << " host(s)";
  if (t.avg_busbw) line << ", avg busbw " << *t.avg_busbw << " GB/s";
  line << (t.complete ? "" : " (incomplete)") << "\n";
  return line.str();
}

void PrintSummary(const ParsedFile& p, size_t tables, const std::vector<std::string>& lines) {
  std::cout << p.file << ": " << tables << " table(s)";
  if (p.log.nccl_version) std::cout << ", NCCL " << *p.log.nccl_version;
  if (p.log.network) std::cout << ", network " << *p.log.network;
  auto transports = p.Transports();
  if (!transports.empty()) {
    std::cout << ", transports";
    for (const auto& t : transports) std::cout << " " << t;
  }
  if (auto g = p.Gdrdma()) std::cout << ", GDRDMA " << (*g ? "on" : "off");
  std::cout << "\n";
  for (const std::string& line : lines) std::cout << line;
  if (tables > lines.size()) {
    std::cout << "  ... " << tables - lines.size() << " more table(s) (see --format json)\n";
  }
}

// "parse: 3/12 night-03.log 512 MB" on one rewritten stderr line, when a
// person watches (stderr is a terminal); scripts and pipes see nothing.
class Progress {
 public:
  explicit Progress(size_t files) : files_(files), on_(::isatty(STDERR_FILENO) == 1) {}

  void Start(size_t index, const std::string& file) {
    index_ = index;
    file_ = file;
  }

  void Bytes(uint64_t read) {
    if (!on_) return;
    auto now = std::chrono::steady_clock::now();
    if (now - last_ < std::chrono::milliseconds(200)) return;
    last_ = now;
    std::cerr << "\rparse: " << index_ + 1 << "/" << files_ << " " << file_ << " " << read / 1000000
              << " MB\x1b[K" << std::flush;
    shown_ = true;
  }

  void Clear() {
    if (shown_) std::cerr << "\r\x1b[K" << std::flush;
    shown_ = false;
  }

 private:
  size_t files_;
  bool on_;
  size_t index_ = 0;
  std::string file_;
  bool shown_ = false;
  std::chrono::steady_clock::time_point last_{};
};

// Appends finished tables' JSON to one buffer on the parse's own thread and
// writes it in large pieces. A writer thread was tried (bea58f5 .. this
// change): the tables' hand-over between threads cost more than formatting
// them (perf stat on 128 MB of the repeated table: 4,397 context switches
// against 157, task-clock 717 against 579 ms), and on a quiet 2-core machine
// the JSON rate was half the text rate where formatting adds about a quarter
// of the parse's instructions (BENCHMARKS.md, "parse").
class JsonTableBuffer {
 public:
  void Add(const TestTable& table, bool first) {
    text_.append(first ? "\n      " : ",\n      ");
    AppendTestTableJson(table, 3, &text_);
    if (text_.size() >= kWriteBytes) Flush();
  }

  void Flush() {
    std::cout.write(text_.data(), static_cast<std::streamsize>(text_.size()));
    text_.clear();
  }

 private:
  static constexpr size_t kWriteBytes = 1 << 20;
  std::string text_;
};

void RunParse(const ParseOptions& o) {
  std::vector<std::string> files;
  bool any_unusable = !app::ExpandInputPaths(o.files, /*walk_folders=*/false, &files, std::cerr);
  bool as_json = o.format == "json";
  Progress progress(files.size());
  JsonTableBuffer json_tables;
  if (as_json) std::cout << "[";
  for (size_t i = 0; i < files.size(); ++i) {
    const std::string& file = files[i];
    progress.Start(i, file);
    size_t tables = 0;
    std::vector<std::string> table_lines;
    if (as_json) {
      // The file's object opens with its name and its tests, written as each
      // table is finished; what is known only at the end (log facts, errors)
      // follows them.
      std::cout << (i == 0 ? "\n" : ",\n") << "  {\n    \"file\": " << Dump(json(file))
                << ",\n    \"tests\": [";
    }
    auto on_table = [&](TestTable&& t) {
      if (as_json) {
        json_tables.Add(t, tables == 0);
      } else if (table_lines.size() < kMaxTableLines) {
        table_lines.push_back(TableLine(t));
      }
      ++tables;
    };
    ParsedFile parsed =
        ParsePathStreaming(file, on_table, [&](uint64_t read) { progress.Bytes(read); });
    progress.Clear();
    if (as_json) {
      json_tables.Flush();
      std::cout << (tables == 0 ? "]" : "\n    ]");
      json rest = ParsedFileToJsonWithoutTests(parsed);
      rest.erase("file");
      for (const auto& [key, value] : rest.items()) {
        std::cout << ",\n    " << Dump(json(key)) << ": " << DumpNested(value, 2);
      }
      std::cout << "\n  }" << std::flush;
    } else {
      PrintSummary(parsed, tables, table_lines);
    }
    for (const ParseError& e : parsed.errors) {
      std::cerr << file << ":" << e.line << ": " << e.message << "\n";
    }
    if (parsed.dropped_errors > 0) {
      std::cerr << file << ": " << parsed.dropped_errors << " more error(s) not listed\n";
    }
    bool usable = parsed.Usable() || tables > 0;
    if (!usable) {
      any_unusable = true;
      if (parsed.errors.empty()) {
        std::cerr << file << ": no nccl-tests table or NCCL log lines found\n";
      }
    }
  }
  if (as_json) std::cout << (files.empty() ? "]\n" : "\n]\n");
  if (any_unusable) throw CommandExit{kExitInputError};
}

}  // namespace

void SetupParse(CLI::App& app) {
  auto options = std::make_shared<ParseOptions>();
  CLI::App* parse = app.add_subcommand(
      "parse", "Parse nccl-tests outputs (text or -J JSON) and NCCL_DEBUG=INFO logs; no database");
  parse->add_option("files", options->files, "files, folders (every file in it) or globs to parse")
      ->required();
  AddFormatOption(parse, &options->format, {"json", "text"});
  parse->callback([options] { RunParse(*options); });
}

}  // namespace fabtrack::cli
